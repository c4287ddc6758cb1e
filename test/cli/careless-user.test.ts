import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CliResult, dispatchedOf, isolatedHome, runCli } from "../helpers/cli.js";
import { reapAll } from "../helpers/folders.js";
import { waitForFile } from "../helpers/wait.js";

// What a new user trips on, tried as one would: careless input, broken homes, the words of each answer.
// Each row is a command line and what it must answer (exit code, the error's code, words it must say).

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "left behind").toBe(0);
});

interface Answer {
  code: number;
  /** The error's code, with --json. */
  error?: string;
  /** Words the output (stdout and stderr) must hold. */
  says?: (string | RegExp)[];
}

function expectAnswer(result: CliResult, answer: Answer): void {
  const all = `${result.stdout}${result.stderr}`;
  expect(result.code, all).toBe(answer.code);
  if (answer.error !== undefined) {
    const printed = JSON.parse(result.stdout) as { error?: { code?: string } };
    expect(printed.error?.code, all).toBe(answer.error);
  }
  for (const words of answer.says ?? []) {
    if (typeof words === "string") expect(all).toContain(words);
    else expect(all).toMatch(words);
  }
}

/** A home with one recorded dispatch `done` in its default run; returns its folder. */
async function homeWithOne(): Promise<{ home: string; env: NodeJS.ProcessEnv; dir: string }> {
  const { home, env } = isolatedHome();
  const result = await runCli(["dispatch", "--backend", "exec", "--name", "done", "--json", "--", "true"], {
    env,
  });
  const d = dispatchedOf(result);
  dispatched.push(d.dispatchId);
  await waitForFile(path.join(d.dir, "record.json"), 20_000);
  return { home, env, dir: d.dir };
}

describe("a run that cannot be read is an error, never an empty run", () => {
  it.each([
    ["status", ["status", "--json"]],
    ["clean --dry-run", ["clean", "--dry-run", "--json"]],
    ["wait", ["wait", "--json"]],
  ])("%s answers E_IO_READ naming the run's folder", async (_title, argv) => {
    const { home, env } = await homeWithOne();
    const dispatches = path.join(home, "runs/default/dispatches");
    fs.renameSync(dispatches, `${dispatches}.moved`);
    fs.writeFileSync(dispatches, "not a folder");
    const result = await runCli(argv, { env });
    expectAnswer(result, { code: 1, error: "E_IO_READ", says: [dispatches] });
  });

  it("says a run that does not exist does not exist, naming the runs there are", async () => {
    const { env } = await homeWithOne();
    expectAnswer(await runCli(["status", "--run", "typo", "--json"], { env }), {
      code: 1,
      error: "E_RUN_NOT_FOUND",
      says: ["there is no run typo", "default"],
    });
    expectAnswer(await runCli(["status"], { env: { ...env, CATHERD_RUN: "typo" } }), {
      code: 1,
      says: ["error E_RUN_NOT_FOUND", "fix: give one of its runs: default"],
    });
    const fresh = isolatedHome();
    expectAnswer(await runCli(["status"], { env: fresh.env }), {
      code: 0,
      says: ["no dispatches in run default"],
    });
  });
});

describe("a dispatch folder that cannot be read", () => {
  it("shows as unknown under its own name, and logs of it is E_IO_READ", async () => {
    const { env, dir } = await homeWithOne();
    for (const file of ["admit.json", "record.json", "events.jsonl"]) {
      fs.rmSync(path.join(dir, file));
      fs.mkdirSync(path.join(dir, file));
    }
    const status = await runCli(["status", "--json"], { env });
    expect(status.code).toBe(0);
    const [row] = (JSON.parse(status.stdout) as { dispatches: Record<string, unknown>[] }).dispatches;
    expect(row).toMatchObject({ name: "done", state: "unknown" });
    expectAnswer(await runCli(["status"], { env }), {
      code: 0,
      says: [/done\s+\S+\s+\S+\s+unknown/, "cannot read"],
    });
    expectAnswer(await runCli(["logs", dir, "--json"], { env }), {
      code: 1,
      error: "E_IO_READ",
      says: [path.join(dir, "events.jsonl")],
    });
  });
});
