import * as fs from "node:fs";
import * as path from "node:path";
import { expect } from "vitest";
import { type CliResult, dispatchedOf, isolatedHome, runCli } from "./cli.js";
import { isAlive } from "./processes.js";
import { waitFor, waitForFile } from "./wait.js";

// What the careless-user tables share (test/cli/careless-*.test.ts): a command line's answer as a row —
// its exit code, the error's code, words it must say — and a home with one recorded dispatch.

export interface Answer {
  code: number;
  /** The error's code, with --json. */
  error?: string;
  /** Words the output (stdout and stderr) must hold. */
  says?: (string | RegExp)[];
}

export function expectAnswer(result: CliResult, answer: Answer): void {
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

/**
 * A home with one recorded dispatch `done` (it printed "working") in its default run, its supervisor gone;
 * returns its folder. Its id goes into `dispatched`, for the test's reaping. The supervisor's work after
 * the record (its cgroup removed, its live marker) is over: a test may plant leftovers without a race.
 */
export async function homeWithOne(
  dispatched: string[],
): Promise<{ home: string; env: NodeJS.ProcessEnv; dir: string }> {
  const { home, env } = isolatedHome();
  const result = await runCli(
    ["dispatch", "--backend", "exec", "--name", "done", "--json", "--", "echo", "working"],
    {
      env,
    },
  );
  const d = dispatchedOf(result);
  dispatched.push(d.dispatchId);
  await waitForFile(path.join(d.dir, "record.json"), 20_000);
  const { pid } = JSON.parse(fs.readFileSync(path.join(d.dir, "supervisor.json"), "utf8")) as { pid: number };
  await waitFor("the supervisor's exit", () => (isAlive(pid) ? undefined : true), 20_000);
  return { home, env, dir: d.dir };
}
