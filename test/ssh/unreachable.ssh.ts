import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, isolatedHome, runCli } from "../helpers/cli.js";
import { FAKE_AGENT, tempDir } from "../helpers/folders.js";
import { reapCgroups, reapDispatch } from "../helpers/processes.js";
import { sshdUnavailable, startSshd } from "../helpers/sshd.js";
import { waitForJson } from "../helpers/wait.js";

// A host that stops answering mid-run (specs/placement.md, "Liveness and cancel"): the rig's sshd is
// stopped while a dispatch runs there, which ends its namespace and everything in it. From here the
// supervisor's lock goes stale and ssh fails: the dispatch is unknown, and nothing is recorded until the
// lock has been silent for UNREACHABLE_LOST_MS (10 min, table-tested in test/engines/ssh-sight.test.ts).

const why = sshdUnavailable();
if (why !== null && process.env.CI !== undefined && process.env.CI !== "") {
  throw new Error(`the ssh suite must run under CI, but ${why}`);
}

function jsonOf<T>(result: CliResult, what: string): T {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}: ${result.stderr}${result.stdout}`);
  return JSON.parse(result.stdout) as T;
}

interface Row {
  dispatchId: string;
  state: string;
  status: string | null;
}

describe.skipIf(why !== null)("a host that stops answering", () => {
  it("leaves its dispatch unknown and unrecorded once the lock is stale and ssh fails", {
    timeout: 150_000,
  }, async () => {
    const sshd = await startSshd();
    let id: string | null = null;
    try {
      const bin = tempDir("catherd-ssh-bin-");
      const real = execFileSync("sh", ["-c", "command -v ssh"], { encoding: "utf8" }).trim();
      const config = sshd
        .sshArgs()
        .map((a) => `'${a}'`)
        .join(" ");
      fs.writeFileSync(path.join(bin, "ssh"), `#!/bin/sh\nexec '${real}' ${config} "$@"\n`, { mode: 0o755 });
      const { env: base } = isolatedHome();
      const env = { ...base, PATH: `${bin}:${process.env.PATH ?? ""}` };
      const scenario = path.join(tempDir(), "scenario.json");
      fs.writeFileSync(scenario, JSON.stringify({ steps: [{ out: "working" }, { hang: true }] }));
      const result = await runCli(
        [
          "dispatch",
          "--json",
          "--placement",
          `ssh:${sshd.host}`,
          "--backend",
          "exec",
          "--",
          process.execPath,
          FAKE_AGENT,
          scenario,
        ],
        { env, timeoutMs: 60_000 },
      );
      const d = jsonOf<{ dispatched: { dispatchId: string; dir: string } }>(result, "dispatch").dispatched;
      id = d.dispatchId;
      await waitForJson(path.join(d.dir, "proc.json"), 60_000);
      // The host goes away, and with its namespace the supervisor and its agent.
      await sshd.stop();
      const lock = path.join(d.dir, "supervisor.lock");
      const deadline = Date.now() + 120_000;
      let row: Row | undefined;
      for (;;) {
        const status = await runCli(["status", "--json"], { env, timeoutMs: 60_000 });
        row = jsonOf<{ dispatches: Row[] }>(status, "status").dispatches.find(
          (r) => r.dispatchId === d.dispatchId,
        );
        const stale = Date.now() - fs.statSync(lock).mtimeMs > 31_000;
        if (stale && row?.state !== "running") break;
        if (Date.now() > deadline) throw new Error(`still ${row?.state} past the deadline`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      expect(row).toMatchObject({ state: "unknown", status: null });
      expect(fs.existsSync(path.join(d.dir, "record.json"))).toBe(false);
    } finally {
      await sshd.stop();
      // The namespace took every process of the dispatch with it; the cgroups its supervisor made on this
      // kernel stay, and are removed.
      expect(id === null ? 0 : reapDispatch(id), "processes left running").toBe(0);
      if (id !== null) reapCgroups(id);
    }
  });
});
