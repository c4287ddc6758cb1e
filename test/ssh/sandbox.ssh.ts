import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { readJson, reapAll, tempDir } from "../helpers/folders.js";
import { probeReports, SANDBOX_PROBE } from "../helpers/sandbox.js";
import {
  type Dispatched,
  jsonOf,
  placedHome,
  placeOn,
  type SshOnPath,
  useRig,
} from "../helpers/ssh-placement.js";
import type { Sshd } from "../helpers/sshd.js";

// A fenced dispatch placed over ssh (specs/sandbox.md, specs/placement.md "SSH"): `--sandbox files` on a
// dispatch placed on the rig. Its supervisor raises the fence on the host — bubblewrap started in the rig's
// PID, UTS and mount namespace — and the sandbox probe inside tries what the fence refuses and what it
// allows; the dispatch is recorded ok from here.

let sshd: Sshd;
let ssh: SshOnPath;
const why = useRig((rig, reach) => {
  sshd = rig;
  ssh = reach;
});

describe.skipIf(why !== null)("--sandbox files placed over ssh", () => {
  it("fences the agent on the host: another dispatch's folder hidden, its own record and the world outside its workplace read-only; recorded ok", async () => {
    const { env } = placedHome(ssh);
    const work = tempDir("catherd-work-");
    const outside = path.join(tempDir("catherd-outside-"), "escaped.txt");
    const ids: string[] = [];
    try {
      // Another dispatch of the home, here: its folder is no business of the fenced one's.
      const first = jsonOf<{ dispatched: Dispatched }>(
        await runCli(["dispatch", "--json", "--backend", "exec", "--", "/bin/sh", "-c", "echo first"], {
          env,
        }),
        "dispatch",
      ).dispatched;
      ids.push(first.dispatchId);
      expect((await runCli(["wait", first.dispatchId, "--json"], { env, timeoutMs: 60_000 })).code).toBe(0);
      const d = await placeOn(sshd, env, [
        ...["--cwd", work, "--sandbox", "files", "--backend", "exec", "--kill-grace", "500ms", "--"],
        "/bin/sh",
        "-c",
        // Its own folder comes from the environment.
        `exec "$0" "$1" "$2" "$3" "$4" "$5" "write:$CATHERD_DISPATCH_DIR/record.json"`,
        process.execPath,
        SANDBOX_PROBE,
        `read:${path.join(first.dir, "events.jsonl")}`,
        `write:${outside}`,
        `!write:${path.join(work, "inside.txt")}`,
        "!read:/proc/sys/kernel/hostname",
      ]);
      ids.push(d.dispatchId);
      const waited = await runCli(["wait", d.dispatchId, "--json"], { env, timeoutMs: 60_000 });
      expect(waited.code, `${waited.stderr}${waited.stdout}`).toBe(0);
      expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({
        status: "ok",
        sandbox: { mode: "files", denied: 0 },
      });
      // The supervisor ran on the host and raised its fence there; the agent saw the host's name.
      expect(readJson(path.join(d.dir, "supervisor.json"))).toMatchObject({
        host: { name: sshd.hostname, pidNamespace: sshd.pidNamespace },
      });
      expect(readJson(path.join(d.dir, "fence.json"))).toMatchObject({ mode: "files" });
      const fenceLine = fs.readFileSync(path.join(d.dir, "sandbox.log"), "utf8").split("\n")[0] ?? "";
      expect(JSON.parse(fenceLine)).toMatchObject({ event: "fence", mode: "files" });
      const tries = probeReports(d.dir);
      expect(tries.get("read:/proc/sys/kernel/hostname")).toMatchObject({
        ok: true,
        detail: `${sshd.hostname}\n`,
      });
      expect(tries.get(`read:${path.join(first.dir, "events.jsonl")}`)).toMatchObject({
        ok: false,
        detail: "ENOENT",
      });
      expect(tries.get(`write:${path.join(d.dir, "record.json")}`)).toMatchObject({
        ok: false,
        detail: "EROFS",
      });
      expect(tries.get(`write:${outside}`)).toMatchObject({ ok: false, detail: "EROFS" });
      expect(fs.existsSync(outside)).toBe(false);
      expect(fs.readFileSync(path.join(work, "inside.txt"), "utf8")).toBe("written by the sandbox probe\n");
    } finally {
      expect(reapAll(ids), "processes left running").toBe(0);
    }
  });
});
