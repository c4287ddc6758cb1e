import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { tempDir } from "../helpers/folders.js";
import { isolateGitConfig, makeRepo } from "../helpers/git.js";
import { useInProcessSession } from "../helpers/mcp.js";
import { waitFor } from "../helpers/wait.js";

// The check through the MCP tools (specs/dispatch.md, "Checks and races"): dispatch takes `verify`,
// `verifyTimeout` and `verifyRepairs`; wait returns the record with its `verify`.

isolateGitConfig();
const mcp = useInProcessSession();

describe("a check through the MCP tools", () => {
  it("takes verify, verifyTimeout and verifyRepairs, and wait returns the check's verdict", async () => {
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [{ lines: recordedLines("codex", "text"), exit: 0 }]);
    const red = await mcp.session.call("dispatch", {
      backend: "codex",
      bin: codex,
      name: "red",
      brief: "fix it",
      verify: "echo '2 failing' >&2; exit 1",
      verifyTimeout: "2m",
      verifyRepairs: 0,
    });
    expect(red.isError, red.text).toBe(false);
    mcp.dispatched.push((red.data.dispatched as { dispatchId: string }).dispatchId);
    const waited = await mcp.session.call("wait", { names: ["red"], timeoutS: 60 }, 90_000);
    expect(waited.data).toMatchObject({
      records: [
        {
          name: "red",
          status: "failed",
          error: { kind: "verify", tail: ["2 failing"] },
          verify: { command: "echo '2 failing' >&2; exit 1", passed: false, runs: [{ exitCode: 1 }] },
        },
      ],
    });
    const bad = await mcp.session.call("dispatch", {
      backend: "codex",
      bin: codex,
      brief: "b",
      verifyRepairs: 1,
    });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/verifyRepairs needs verify/);
  });

  it("notifies each attempt of a race as it is recorded, the loser cancelled too", async () => {
    const bins = tempDir();
    const check = 'test "$(cat answer.txt)" = right || { echo "not right"; exit 1; }';
    const repo = makeRepo(path.join(tempDir(), "repo"), {
      "check.sh": `${check}\n`,
      "answer.txt": "wrong\n",
    });
    // codex's attempt holds until cancelled; claude's writes the right answer and wins.
    const never = path.join(tempDir(), "never");
    const codex = fakeCli(bins, "codex", [
      { lines: recordedLines("codex", "text"), exit: 0, holdAt: { line: 0, until: never } },
    ]);
    const claude = fakeCli(bins, "claude", [
      { lines: recordedLines("claude", "text"), exit: 0, write: { file: "answer.txt", text: "right\n" } },
    ]);
    const savedBin = process.env.CATHERD_CLAUDE_BIN;
    process.env.CATHERD_CLAUDE_BIN = claude;
    let started: Awaited<ReturnType<typeof mcp.session.call>>;
    try {
      started = await mcp.session.call("dispatch", {
        backend: "codex",
        bin: codex,
        name: "fix",
        cwd: repo,
        brief: "make the check pass",
        worktree: true,
        verify: "sh check.sh",
        also: ["claude-code"],
      });
    } finally {
      if (savedBin === undefined) delete process.env.CATHERD_CLAUDE_BIN;
      else process.env.CATHERD_CLAUDE_BIN = savedBin;
    }
    expect(started.isError, started.text).toBe(false);
    const attempts = (started.data.race as { attempts: { name: string; dispatchId: string }[] }).attempts;
    mcp.dispatched.push(...attempts.map((a) => a.dispatchId));
    const notices = await waitFor("a notice for each attempt", () =>
      mcp.session.notices.length >= 2 ? mcp.session.notices : undefined,
    );
    const byName = Object.fromEntries(notices.map((n) => [n.name as string, n.status]));
    expect(byName).toEqual({ "fix.1": "cancelled", "fix.2": "ok" });
  });
});
