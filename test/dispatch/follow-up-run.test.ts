import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { json, runCli } from "../helpers/cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { dispatch, setUp, THREAD, treeOf, waitRecorded } from "../helpers/follow-up.js";
import { isolateGitConfig, makeRepo } from "../helpers/git.js";
import { isAlive } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";

// A follow-up as its run sees it (specs/dispatch.md, "Following up"): `catherd clean` takes a
// conversation's worktree only with its newest turn, never while a follow-up works in it; the run's
// budget counts the conversation's turns as any dispatches. The same fake codex as follow-up.test.ts.

const dispatched: string[] = [];

beforeAll(() => isolateGitConfig());

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

describe("catherd clean and a conversation's worktree", () => {
  it("removes an earlier turn's folder without the worktree a live follow-up works in, and the worktree with the newest turn", async () => {
    const { bins, env } = setUp();
    const repo = makeRepo(tempDir(), { "a.txt": "one\n" });
    const first = await dispatch(dispatched, env, [
      "--backend",
      "codex",
      "--name",
      "talk",
      "--cwd",
      repo,
      "--worktree",
      "--brief",
      "q",
    ]);
    await waitRecorded(env, "talk");
    const worktree = JSON.parse(fs.readFileSync(path.join(first.dir, "spec.json"), "utf8")).worktree
      .path as string;
    const hold = path.join(bins, "go");
    const second = await dispatch(dispatched, { ...env, HOLD_UNTIL: hold }, [
      "--follow-up",
      "talk",
      "--brief",
      "more",
    ]);
    await waitFor("the follow-up to run", () =>
      fs.existsSync(path.join(second.dir, "proc.json")) ? true : undefined,
    );

    const during = json<{ clean: { removed: { dispatchId: string; worktree: unknown }[] } }>(
      await runCli(["clean", "--older-than", "0", "--json"], { env }),
    ).clean;
    expect(during.removed.map((r) => [r.dispatchId, r.worktree])).toEqual([[first.dispatchId, null]]);
    expect(fs.existsSync(first.dir)).toBe(false);
    expect(fs.existsSync(path.join(worktree, "a.txt"))).toBe(true);

    fs.writeFileSync(hold, "");
    await waitRecorded(env, "talk");
    const after = json<{ clean: { removed: { dispatchId: string; worktree: { path: string } | null }[] } }>(
      await runCli(["clean", "--older-than", "0", "--json"], { env }),
    ).clean;
    expect(after.removed.map((r) => [r.dispatchId, r.worktree?.path])).toEqual([
      [second.dispatchId, worktree],
    ]);
    expect(fs.existsSync(worktree)).toBe(false);
  }, 120_000);
});

describe("a follow-up and its run's budget", () => {
  it("is refused with E_RUN_BUDGET, nothing written, once the first turn spent the run's budget", async () => {
    const { home, env } = setUp();
    // The recorded codex run bills 10,091 tokens: over the budget of 5,000 once it is recorded.
    const d = await dispatch(dispatched, env, [
      "--backend",
      "codex",
      "--name",
      "talk",
      "--run-budget",
      "tokens=5000",
      "--brief",
      "q",
    ]);
    const first = await waitRecordedAny(env, "talk");
    expect(first.thread).toBe(THREAD);
    // After its record the supervisor still removes its reserve and lock and writes its log: the home is
    // taken as it stands once it has exited.
    const { pid } = JSON.parse(fs.readFileSync(path.join(d.dir, "supervisor.json"), "utf8")) as {
      pid: number;
    };
    await waitFor("the first turn's supervisor to exit", () => (isAlive(pid) ? undefined : true), 20_000);
    const before = treeOf(home);
    const refused = await runCli(["dispatch", "--follow-up", "talk", "--brief", "more", "--json"], { env });
    const error = json<{ error: { code: string; message: string } }>(refused).error;
    expect(error.code, error.message).toBe("E_RUN_BUDGET");
    expect(treeOf(home)).toEqual(before);
  }, 120_000);
});

/** The record `wait` returns, whatever its status (a turn stopped by the run's budget is not ok). */
async function waitRecordedAny(env: NodeJS.ProcessEnv, name: string): Promise<Record<string, unknown>> {
  const waited = await runCli(["wait", name, "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
  return json<{ records: Record<string, unknown>[] }>(waited).records[0] as Record<string, unknown>;
}
