import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { CLI_MAIN, tempDir } from "../helpers/folders.js";
import { reapLocks } from "../helpers/locks.js";
import { recordOf, useSandboxedDispatches } from "../helpers/sandbox.js";
import { waitFor } from "../helpers/wait.js";

// The sandbox's PID namespace (specs/sandbox.md, "Processes"): nothing inside can signal a process of
// catherd's, /proc shows the sandbox's own processes alone, and `catherd lock` inside is judged by its
// pid in that namespace from outside.

const sandboxed = useSandboxedDispatches();
afterEach(() => {
  expect(reapLocks(), "locks left running").toBe(0);
});

function setup() {
  const { env } = isolatedHome();
  return { ...env, HOME: tempDir("catherd-user-home-") };
}

/** A pid field of a JSON file of the dispatch folder, as a shell inside reads it. */
const pidIn = (file: string) =>
  `$(sed -n 's/.*"pid": *\\([0-9]*\\).*/\\1/p' "$CATHERD_DISPATCH_DIR/${file}" | head -n 1)`;

describe("the sandbox's own PID namespace", () => {
  it("an agent that signals its supervisor and bubblewrap reaches neither, and is recorded ok", async () => {
    const env = setup();
    const d = await sandboxed.dispatch(
      env,
      "signals",
      ["--cwd", tempDir("catherd-work-"), "--sandbox", "files"],
      [
        "/bin/sh",
        "-c",
        [
          `while [ ! -s "$CATHERD_DISPATCH_DIR/proc.json" ]; do sleep 0.02; done`,
          `supervisor=${pidIn("supervisor.json")}; monitor=${pidIn("proc.json")}`,
          `kill -KILL "$monitor" 2>/dev/null && echo monitor-killed || echo monitor-unreachable`,
          `kill -KILL "$supervisor" 2>/dev/null && echo supervisor-killed || echo supervisor-unreachable`,
          `[ -e "/proc/$supervisor" ] && echo supervisor-seen || echo supervisor-unseen`,
          `echo "processes $(ls /proc | grep -c '^[0-9]')"`,
        ].join("; "),
      ],
    );
    const record = await recordOf(env, "signals");
    const events = fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8");
    expect(events).toContain("monitor-unreachable");
    expect(events).toContain("supervisor-unreachable");
    expect(events).toContain("supervisor-unseen");
    // bubblewrap's init, the shell, the agent's shell and its pipeline: a handful, not the machine's.
    expect(Number(/processes (\d+)/.exec(events)?.[1])).toBeLessThan(10);
    expect(record.status, JSON.stringify(record.error)).toBe("ok");
  });

  it("a slot held by `catherd lock` inside is live and checked from outside, and free once the dispatch is cancelled", async () => {
    const env = { ...setup(), CATHERD_LOCK_SLOTS: "1" };
    const d = await sandboxed.dispatch(
      env,
      "holder",
      ["--cwd", tempDir("catherd-work-"), "--sandbox", "files"],
      [process.execPath, CLI_MAIN, "lock", "--", "/bin/sh", "-c", "echo holding; sleep 60"],
    );
    const listed = async () => {
      const status = await runCli(["lock", "--status", "--json"], { env });
      const classes = (JSON.parse(status.stdout) as { lock: { classes: { holders: unknown[] }[] } }).lock
        .classes;
      return (classes[0]?.holders ?? []) as { unchecked: boolean; dispatch: { id: string } | null }[];
    };
    const events = path.join(d.dir, "events.jsonl");
    await waitFor("the sandboxed lock to hold its slot", () =>
      fs.existsSync(events) && fs.readFileSync(events, "utf8").includes("holding") ? true : undefined,
    );
    const holders = await listed();
    expect(holders).toHaveLength(1);
    expect(holders[0]).toMatchObject({ unchecked: false, dispatch: { id: d.dispatchId } });
    // The supervisor outside reads the lock's report as live: the dispatch runs a heavy command.
    const status = await runCli(["status"], { env });
    expect(status.stdout).toMatch(/holder\s+\S+\s+exec\s+running .*heavy/);
    const cancelled = await runCli(["cancel", "holder", "--wait"], { env, timeoutMs: 30_000 });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(await listed()).toEqual([]);
  });
});
