import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { listLinuxPids } from "../../src/infra/process-identity.js";
import { runCli } from "../helpers/cli.js";
import { readJson, reapAll, tempDir } from "../helpers/folders.js";
import {
  type Dispatched,
  eventually,
  execArgs,
  jsonOf,
  placedHome,
  placeOn,
  type SshOnPath,
  useRig,
} from "../helpers/ssh-placement.js";
import type { Sshd } from "../helpers/sshd.js";
import { waitFor } from "../helpers/wait.js";

// Ten dispatches placed on the rig at once and waited for as a run from here (specs/placement.md, "SSH"):
// each supervisor started over ssh in the rig's PID namespace, each recorded ok, and afterwards nothing of
// them runs on either side — this machine's /proc shows the rig's processes too, so one look covers both.

const COUNT = 10;
let sshd: Sshd;
let ssh: SshOnPath;
const why = useRig((rig, reach) => {
  sshd = rig;
  ssh = reach;
});

/** The pids of this machine (the rig's included) whose command line names one of `dirs`. */
function processesOf(dirs: readonly string[]): number[] {
  return listLinuxPids().filter((pid) => {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return argv.some((arg) => dirs.some((dir) => arg.includes(dir)));
    } catch {
      return false;
    }
  });
}

describe.skipIf(why !== null)("ten dispatches placed on one host", () => {
  it("are waited for as a run from here, each recorded ok by a supervisor of the host, none left running", {
    timeout: 120_000,
  }, async () => {
    const { env } = placedHome(ssh);
    const run = `ten-${process.pid}`;
    let placed: Dispatched[] = [];
    try {
      placed = await Promise.all(
        Array.from({ length: COUNT }, (_, i) =>
          placeOn(sshd, env, [
            "--run",
            run,
            "--name",
            `d${i}`,
            ...execArgs([{ out: `hello ${i}` }, { exit: 0 }]),
          ]),
        ),
      );
      const waited = jsonOf<{ records: { dispatchId: string; status: string }[] }>(
        await runCli(["wait", "--run", run, "--json"], { env, timeoutMs: 90_000 }),
        "wait --run",
      );
      expect(waited.records.map((r) => r.status)).toEqual(Array(COUNT).fill("ok"));
      expect(new Set(waited.records.map((r) => r.dispatchId))).toEqual(
        new Set(placed.map((d) => d.dispatchId)),
      );
      for (const d of placed) {
        const supervisor = readJson(path.join(d.dir, "supervisor.json")) as {
          pid: number;
          host: { name: string; pidNamespace: string };
        };
        expect(supervisor.host).toMatchObject({ name: sshd.hostname, pidNamespace: sshd.pidNamespace });
        expect(String(supervisor.pid)).toBe(d.placement?.jobId);
        expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({ status: "ok" });
      }
      // Each supervisor ends once it has recorded: none runs there, nothing of the dispatches runs here.
      const dirs = placed.map((d) => d.dir);
      await waitFor(
        "every process of the ten to end",
        () => (processesOf(dirs).length === 0 ? true : undefined),
        30_000,
      );
      const jobs = placed.map((d) => d.placement?.jobId).join(",");
      const asked = await eventually(
        "the rig to run none of the supervisors",
        async () => {
          const r = await sshd.exec(`ps -o pid= -p ${jobs} || true`);
          return r.code === 0 && r.stdout.trim() === "" ? r : undefined;
        },
        30_000,
      );
      expect(asked.stdout.trim()).toBe("");
    } finally {
      expect(reapAll(placed.map((d) => d.dispatchId)), "processes left running").toBe(0);
    }
  });

  it("are held to the host's cap, one at a time, the rest queued and started as each is recorded", {
    timeout: 120_000,
  }, async () => {
    const { env } = placedHome(ssh);
    const run = `cap-${process.pid}`;
    // The host's ssh reaches itself as this side's does: the supervisor that records one promotes the next
    // from there (specs/placement.md, "A host that does not answer").
    fs.symlinkSync(path.join(ssh.bin, "ssh"), path.join(sshd.loginBin, "ssh"));
    // The first holds the host's one slot until the others are queued behind it.
    const gate = path.join(tempDir(), "go");
    const steps = [{ out: "working" }, { sleep: 300 }, { exit: 0 }];
    const cap = ["--run", run, "--max-parallel-host", `${sshd.host}=1`];
    const placed: Dispatched[] = [];
    try {
      const first = [{ out: "holding" }, { waitFor: gate }, { exit: 0 }];
      placed.push(await placeOn(sshd, env, [...cap, "--name", "c0", ...execArgs(first)]));
      for (const name of ["c1", "c2"]) {
        const d = await placeOn(sshd, env, [...cap, "--name", name, "--queue", ...execArgs(steps)]);
        expect(d).toMatchObject({ queued: true, blockedBy: "host-cap" });
        placed.push(d);
      }
      fs.writeFileSync(gate, "");
      const waited = jsonOf<{ records: { status: string }[] }>(
        await runCli(["wait", "--run", run, "--json"], { env, timeoutMs: 90_000 }),
        "wait --run",
      );
      expect(waited.records.map((r) => r.status)).toEqual(["ok", "ok", "ok"]);
      // One at a time on the host: each agent started after the one before it had ended.
      const spans = placed
        .map((d) => readJson(path.join(d.dir, "exit.json")) as { startedAt: string; endedAt: string })
        .sort((a, b) => Date.parse(a.startedAt) - Date.parse(b.startedAt));
      for (let i = 1; i < spans.length; i++) {
        expect(Date.parse(spans[i]?.startedAt ?? "")).toBeGreaterThanOrEqual(
          Date.parse(spans[i - 1]?.endedAt ?? ""),
        );
      }
    } finally {
      expect(reapAll(placed.map((d) => d.dispatchId)), "processes left running").toBe(0);
    }
  });
});
