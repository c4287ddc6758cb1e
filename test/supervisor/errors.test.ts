import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/infra/clock.js";
import { findByDispatchVariable } from "../../src/infra/sweep.js";
import { type FileWriter, systemFiles } from "../../supervisor/deps.js";
import { superviseDispatch } from "../../supervisor/supervise.js";
import { fakeAgentFolder, readJson, reapAll } from "../helpers/folders.js";

// The supervisor's error story, in process: a refused write is E_IO_WRITE, any other throw is a bug,
// E_INTERNAL, with its stack in supervisor.log; either way the agent is stopped and the dispatch recorded.

const dispatched: string[] = [];
afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

/** The real file port, except that writing `name` throws what `fail` makes. */
function throwingOn(name: string, fail: (file: string) => Error): FileWriter {
  return {
    writeJson: (file, value) => {
      if (path.basename(file) === name) throw fail(file);
      systemFiles.writeJson(file, value);
    },
    createJson: (file, value) => systemFiles.createJson(file, value),
  };
}

// The write fails right after the spawn, so the stop may come before the agent has run a single step:
// what is left of it is found by its CATHERD_DISPATCH, not by anything it wrote.
async function superviseWith(files: FileWriter) {
  const { dir, id } = fakeAgentFolder({ steps: [{ hang: true }] }, { idleMs: 5000 });
  dispatched.push(id);
  const code = await superviseDispatch(dir, { clock: systemClock, files }, new AbortController().signal);
  const log = fs
    .readFileSync(path.join(dir, "supervisor.log"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const leftRunning = findByDispatchVariable(id).length;
  return { dir, code, log, leftRunning };
}

describe("the supervisor's errors", () => {
  it("records a bug as supervisor-error with E_INTERNAL and logs its stack", async () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'pid')");
    const { dir, code, log, leftRunning } = await superviseWith(throwingOn("proc.json", () => bug));
    expect(code).toBe(0);
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({
      reason: "supervisor-error",
      error: { code: "E_INTERNAL", message: bug.message },
    });
    expect(log.find((line) => line.event === "supervisor-error")).toMatchObject({
      code: "E_INTERNAL",
      stack: bug.stack,
    });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({
      status: "failed",
      error: { code: "E_INTERNAL" },
    });
    expect(leftRunning).toBe(0);
  });

  it("records a refused write as E_IO_WRITE, without a stack", async () => {
    const refused = (file: string) =>
      Object.assign(new Error(`EROFS: read-only file system, open '${file}'`), {
        code: "EROFS",
        syscall: "open",
        path: file,
      });
    const { dir, log, leftRunning } = await superviseWith(throwingOn("proc.json", refused));
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({
      reason: "supervisor-error",
      error: { code: "E_IO_WRITE", message: expect.stringContaining("proc.json") },
    });
    const line = log.find((l) => l.event === "supervisor-error");
    expect(line).toMatchObject({ code: "E_IO_WRITE" });
    expect(line).not.toHaveProperty("stack");
    expect(leftRunning).toBe(0);
  });
});
