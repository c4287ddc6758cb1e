import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import {
  CLI_MAIN,
  fakeAgentFolder,
  ROOT,
  readJson,
  reapAll,
  SUPERVISOR_MAIN,
  tempDir,
} from "../helpers/folders.js";
import { killPid, standbysOf } from "../helpers/processes.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

// The exit-code table through real processes: Ctrl-C (SIGINT) gives 130 and, with --json, an error object
// on stdout; the supervisor program prints its errors the same way; --version prints the version.

const started: ChildProcess[] = [];
const dispatched: string[] = [];
afterEach(() => {
  for (const child of started.splice(0)) killPid(child.pid);
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

/** A program started with its output collected; stdin stays open until the test ends it. */
function startProgram(args: readonly string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, args, { env, stdio: ["pipe", "pipe", "pipe"] });
  started.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdin?.on("error", () => {});
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  return { child, done, output: () => ({ stdout, stderr }) };
}

/** Resolves when `done` does, or fails the test after a deadline instead of hanging it. */
async function within<T>(what: string, done: Promise<T>, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms);
  });
  return Promise.race([done, late]).finally(() => clearTimeout(timer));
}

describe("Ctrl-C", () => {
  it("ends a dispatch waiting for its brief with 130, an E_INTERRUPTED object, and nothing left behind", async () => {
    const { home, env } = isolatedHome();
    fs.mkdirSync(home, { recursive: true });
    // --brief-file - reads the brief from stdin, which the test keeps open: the dispatcher waits there.
    const run = startProgram(
      [CLI_MAIN, "dispatch", "--backend", "exec", "--json", "--brief-file", "-", "--", "/bin/true"],
      env,
    );
    // Its standby supervisor's output file appears once the dispatcher runs its own code (its Ctrl-C
    // handler is in place by then).
    await waitFor("the dispatcher's standby supervisor", () =>
      fs.readdirSync(home).some((name) => name.startsWith(".standby-")) ? true : undefined,
    );
    run.child.kill("SIGINT");
    const { code, signal } = await within("the interrupted dispatch", run.done);
    const { stdout, stderr } = run.output();
    expect({ code, signal, stderr }).toEqual({ code: 130, signal: null, stderr: "" });
    expect(JSON.parse(stdout)).toEqual({
      error: { code: "E_INTERRUPTED", message: "interrupted (SIGINT)", fix: expect.any(String) },
    });
    expect(dispatchFolders(home)).toEqual([]);
    // Its standby saw the pipe close: it goes, taking its output file with it.
    await waitFor("the standby to go", () => (standbysOf(home).length === 0 ? true : undefined));
    await waitFor("the standby's file to go", () =>
      fs.readdirSync(home).some((name) => name.startsWith(".standby-")) ? undefined : true,
    );
  });

  it("stops a foreground supervise's agent, records it cancelled, and exits 130 with --json's error object", async () => {
    const marker = path.join(tempDir(), "running");
    const { dir, id } = fakeAgentFolder({ steps: [{ touch: marker }, { hang: true }] });
    dispatched.push(id);
    const run = startProgram([SUPERVISOR_MAIN, dir, "--json"]);
    await waitForFile(marker);
    run.child.kill("SIGINT");
    const { code } = await within("the interrupted supervisor", run.done);
    expect(code).toBe(130);
    expect(JSON.parse(run.output().stdout)).toMatchObject({ error: { code: "E_INTERRUPTED" } });
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({
      reason: "cancelled",
      error: { code: "E_SUPERVISOR_SIGNALLED", message: "the supervisor received SIGINT" },
    });
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "cancelled" });
  });
});

describe("the supervisor's errors", () => {
  it.each([
    ["catherd supervise", [CLI_MAIN, "supervise"]],
    ["dist/bin/supervisor.js", [SUPERVISOR_MAIN]],
  ])("%s prints its refusal as the error object with --json, and as text without", async (_title, argv) => {
    const plainDir = tempDir();
    for (const json of [true, false]) {
      const run = startProgram([...argv, plainDir, ...(json ? ["--json"] : [])]);
      run.child.stdin?.end();
      const { code } = await within("the refusal", run.done);
      const { stdout, stderr } = run.output();
      expect(code).toBe(2);
      if (json) {
        expect(stderr).toBe("");
        expect(JSON.parse(stdout)).toMatchObject({
          error: { code: "E_INPUT_INVALID", message: expect.stringContaining("not a dispatch folder") },
        });
      } else {
        expect(stdout).toBe("");
        expect(stderr).toMatch(/^error E_INPUT_INVALID: .*not a dispatch folder.*\nfix: .+\n$/);
      }
    }
    expect(fs.readdirSync(plainDir)).toEqual([]);
  });
});

describe("catherd --version", () => {
  it("prints the version of the package, as text and as JSON", async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    const text = await runCli(["--version"]);
    expect(text).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
    const json = await runCli(["--version", "--json"]);
    expect({ code: json.code, data: JSON.parse(json.stdout) }).toEqual({ code: 0, data: { version } });
  });
});
