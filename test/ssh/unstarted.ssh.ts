import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { readJson, reapAll } from "../helpers/folders.js";
import {
  execArgs,
  jsonOf,
  placedHome,
  placeOn,
  rowOf,
  type SshOnPath,
  useRig,
} from "../helpers/ssh-placement.js";
import type { Sshd } from "../helpers/sshd.js";
import { waitForLine } from "../helpers/wait.js";

// Cancel of a dispatch whose supervisor was started over ssh and has not come up (specs/placement.md,
// "Liveness and cancel"): no supervisor.json yet, so nothing on the host reads the cancel file. The start
// is held on the rig before the supervisor's program runs: the start script takes node and the supervisor
// at this side's paths, which the rig shares, and finds only `setsid` on the host's login PATH — there the
// rig's login folder holds a `setsid` that waits on a FIFO nobody writes, then would exec the real one.
// The pid the start printed is that wrapper: its command line names the folder, as the supervisor's will.

let sshd: Sshd;
let ssh: SshOnPath;
const why = useRig((rig, reach) => {
  sshd = rig;
  ssh = reach;
});

/** A `setsid` first on the rig's login PATH that writes its pid to `held`, then waits on a FIFO. */
function holdTheStart(rig: Sshd): { held: string; remove(): void } {
  const held = path.join(rig.loginBin, "held.pid");
  const fifo = path.join(rig.loginBin, "release");
  execFileSync("mkfifo", [fifo]);
  const real = execFileSync("sh", ["-c", "command -v setsid"], { encoding: "utf8" }).trim();
  const wrapper = path.join(rig.loginBin, "setsid");
  fs.writeFileSync(wrapper, `#!/bin/sh\necho "$$" > '${held}'\nread _ < '${fifo}'\nexec '${real}' "$@"\n`, {
    mode: 0o755,
  });
  return {
    held,
    remove: () => {
      for (const file of [wrapper, fifo, held]) fs.rmSync(file, { force: true });
    },
  };
}

/** The pid's command line on the rig, asked over ssh ("" once no process there has that pid). */
async function argsOnRig(pid: number): Promise<string> {
  const asked = await sshd.exec(`ps -o args= -p ${pid} || true`);
  if (asked.code !== 0) throw new Error(`ssh to the rig failed (${asked.code}): ${asked.stderr}`);
  return asked.stdout.trim();
}

describe.skipIf(why !== null)("cancel of a supervisor started over ssh that has not come up", () => {
  it("writes the cancel file, ends the pid it started there over ssh, and is recorded cancelled once", async () => {
    const { env } = placedHome(ssh);
    const hold = holdTheStart(sshd);
    let id: string | null = null;
    try {
      const login = await sshd.exec(`"$SHELL" -lc 'command -v setsid'`);
      expect(login.stdout.trim(), "the held setsid first on the rig's login PATH").toBe(
        path.join(sshd.loginBin, "setsid"),
      );
      const d = await placeOn(sshd, env, execArgs([{ out: "must not run" }, { exit: 0 }]));
      id = d.dispatchId;
      const pid = Number(await waitForLine(hold.held, 30_000));
      expect(String(pid)).toBe(d.placement?.jobId);
      expect(await argsOnRig(pid)).toContain(d.dir);
      expect(fs.existsSync(path.join(d.dir, "supervisor.json"))).toBe(false);
      const run = (args: readonly string[]) => runCli(args, { env, timeoutMs: 60_000 });
      const { cancelled } = jsonOf<{ cancelled: { state: string; status: string | null } }>(
        await run(["cancel", d.dispatchId, "--json"]),
        "cancel",
      );
      expect(cancelled).toMatchObject({ state: "recorded", status: "cancelled" });
      expect(fs.existsSync(path.join(d.dir, "cancel"))).toBe(true);
      // Gone on the host, as the host tells it; the test never signalled it.
      expect(await argsOnRig(pid)).toBe("");
      expect(sshd.hostPidOf(pid)).toBeNull();
      const record = path.join(d.dir, "record.json");
      const words = `ssh ${sshd.host}: supervisor ${pid} is no longer running there (cancelled); its supervisor never started`;
      expect(readJson(record)).toMatchObject({
        status: "cancelled",
        startedAt: null,
        error: { code: "cancelled", engine: { name: "ssh", jobId: String(pid), state: "CANCELLED", words } },
      });
      await recordedOnce(d.dispatchId, record, run);
      for (const never of ["supervisor.json", "proc.json"]) {
        expect(fs.existsSync(path.join(d.dir, never)), never).toBe(false);
      }
    } finally {
      hold.remove();
      expect(reapAll(id === null ? [] : [id]), "processes left running").toBe(0);
    }
  });
});

/** The record stays as written (the same file, the same bytes) through later readers: written once. */
async function recordedOnce(
  id: string,
  record: string,
  run: (args: readonly string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>,
): Promise<void> {
  const written = { text: fs.readFileSync(record, "utf8"), ino: fs.statSync(record).ino };
  expect(await rowOf(id, run)).toMatchObject({ state: "recorded", status: "cancelled" });
  expect((await run(["cancel", id, "--json"])).code).toBe(0);
  expect((await run(["wait", id, "--json"])).code).toBe(1);
  expect({ text: fs.readFileSync(record, "utf8"), ino: fs.statSync(record).ino }).toEqual(written);
}
