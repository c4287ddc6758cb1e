import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, dispatchFolders, runCli } from "../helpers/cli.js";
import { decoysUnavailable, startDecoys } from "../helpers/decoys.js";
import { CLI_MAIN, readJson, reapAll } from "../helpers/folders.js";
import { isAlive, reapCgroups, reapDispatch } from "../helpers/processes.js";
import {
  type Dispatched,
  eventually,
  execArgs,
  jsonOf,
  placedHome,
  placeOn,
  rowOf,
  type SshOnPath,
  sshOnPath,
  useRig,
} from "../helpers/ssh-placement.js";
import type { Sshd } from "../helpers/sshd.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// `catherd dispatch --placement ssh:HOST` end to end on the rig (test/helpers/sshd.ts): the real CLI, the
// real ssh and sshd, the supervisor started in the rig's PID and UTS namespace — another host to
// catherd — and the folder the only channel between the two sides (specs/placement.md, "SSH"). catherd
// runs ssh as the user would; the tests give it the rig's client config by an `ssh` first on PATH that
// adds `-F` and notes each call (test/helpers/ssh-placement.ts), so that a test can say whether ssh ran.

let sshd: Sshd;
let ssh: SshOnPath;
const why = useRig((rig, reach) => {
  sshd = rig;
  ssh = reach;
});

const home = () => placedHome(ssh);
const rowHere = (env: NodeJS.ProcessEnv, id: string) =>
  rowOf(id, (args) => runCli(args, { env, timeoutMs: 60_000 }));

/** A dispatch of a fake agent that works until it is stopped, placed on the rig; its supervisor has spawned it. */
async function hanging(
  env: NodeJS.ProcessEnv,
): Promise<
  Dispatched & { agent: number; supervisor: number; remote: { agent: number; supervisor: number } }
> {
  const d = await placeOn(sshd, env, execArgs([{ out: "working" }, { hang: true }]));
  const proc = await waitForJson<{ pid: number }>(path.join(d.dir, "proc.json"), 60_000);
  const remote = { agent: proc.pid, supervisor: Number(d.placement?.jobId) };
  const agent = sshd.hostPidOf(remote.agent);
  const supervisor = sshd.hostPidOf(remote.supervisor);
  if (agent === null || supervisor === null)
    throw new Error("the rig shows no agent or supervisor of the dispatch");
  return { ...d, agent, supervisor, remote };
}

describe.skipIf(why !== null)("dispatch --placement ssh:HOST on the rig", () => {
  it("starts the supervisor on the host, detached there, and is waited for from here", async () => {
    const { home: h, env } = home();
    let id: string | null = null;
    try {
      const result = await runCli(
        [
          "dispatch",
          "--json",
          "--placement",
          `ssh:${sshd.host}`,
          ...execArgs([{ out: "hello from afar" }, { exit: 0 }]),
        ],
        { env, timeoutMs: 60_000 },
      );
      const d = jsonOf<{ dispatched: Dispatched }>(result, "dispatch").dispatched;
      id = d.dispatchId;
      expect(d.placement).toMatchObject({ engine: "ssh", state: "running", node: sshd.host });
      expect(readJson(path.join(d.dir, "placement.json"))).toMatchObject({
        engine: "ssh",
        target: sshd.host,
        jobId: d.placement?.jobId,
      });
      const waited = await runCli(["wait", d.dispatchId, "--json"], { env, timeoutMs: 60_000 });
      expect(waited.code, waited.stderr).toBe(0);
      const record = await waitForJson(path.join(d.dir, "record.json"), 60_000);
      expect(record).toMatchObject({ status: "ok" });
      // The supervisor ran on the other side: its host is the rig's, its PID namespace the rig's.
      const supervisor = readJson(path.join(d.dir, "supervisor.json")) as {
        pid: number;
        host: { name: string; pidNamespace: string };
      };
      expect(supervisor.host).toMatchObject({ name: sshd.hostname, pidNamespace: sshd.pidNamespace });
      expect(String(supervisor.pid)).toBe(d.placement?.jobId);
      expect(readJson(path.join(d.dir, "placement.json"))).toMatchObject({ node: sshd.hostname });
      // The shared-folder check's marker is gone; the supervisor's output went into the folder.
      expect(fs.readdirSync(h).filter((name) => name.startsWith(".placement-check."))).toEqual([]);
      expect(fs.existsSync(path.join(d.dir, "ssh.out"))).toBe(true);
    } finally {
      expect(reapAll(id === null ? [] : [id]), "processes left running").toBe(0);
    }
  });

  it("names the host's node in placement.json when the supervisor came up before the dispatcher wrote it", async () => {
    // The start's ssh returns only once the supervisor runs its agent: placement.json is written after.
    const { env } = placedHome(sshOnPath(sshd, { lateStart: true }));
    let id: string | null = null;
    try {
      const d = await placeOn(sshd, env, execArgs([{ out: "quick" }, { exit: 0 }]));
      id = d.dispatchId;
      const waited = await runCli(["wait", d.dispatchId, "--json"], { env, timeoutMs: 60_000 });
      expect(waited.code, waited.stderr).toBe(0);
      expect(readJson(path.join(d.dir, "placement.json"))).toMatchObject({
        engine: "ssh",
        jobId: d.placement?.jobId,
        node: sshd.hostname,
      });
    } finally {
      expect(reapAll(id === null ? [] : [id]), "processes left running").toBe(0);
    }
  });

  it("is judged running by its fresh lock from here, with no ssh call, and cancelled through the folder", async () => {
    const { env } = home();
    let id: string | null = null;
    try {
      const d = await hanging(env);
      id = d.dispatchId;
      const before = ssh.calls();
      const row = await rowHere(env, d.dispatchId);
      expect(row, "the dispatch's row in status").toBeDefined();
      expect(row).toMatchObject({ state: "running" });
      // A fresh lock decides: the host is not asked.
      expect(ssh.calls()).toBe(before);
      const cancelled = await runCli(["cancel", d.dispatchId, "--wait", "--json"], {
        env,
        timeoutMs: 60_000,
      });
      expect(cancelled.code, cancelled.stderr).toBe(0);
      expect(await waitForJson(path.join(d.dir, "record.json"), 60_000)).toMatchObject({
        status: "cancelled",
      });
      // The supervisor on the host stopped its agent and recorded the cancel itself (its log's line comes
      // after record.json).
      const logFile = path.join(d.dir, "supervisor.log");
      const log = await waitFor("the supervisor's recorded line", () => {
        const text = fs.readFileSync(logFile, "utf8");
        return text.includes('"event":"recorded"') ? text : undefined;
      });
      expect(log.match(/"event":"recorded"/g)).toHaveLength(1);
    } finally {
      expect(reapAll(id === null ? [] : [id]), "processes left running").toBe(0);
    }
  });

  it.skipIf(decoysUnavailable() !== null)(
    "records a supervisor gone on the host as lost once its lock is stale, and never signals a pid of the host from here",
    { timeout: 150_000 },
    async () => {
      const { env } = home();
      let id: string | null = null;
      try {
        const d = await hanging(env);
        id = d.dispatchId;
        // A submitting host whose own pids are the numbers the folder names on the rig: decoys carrying the
        // dispatch's variable and folder at the agent's pid and the supervisor's (test/helpers/decoys.ts).
        const decoys = await startDecoys({
          pids: [d.remote.agent, d.remote.supervisor],
          dispatchId: d.dispatchId,
          dir: d.dir,
        });
        try {
          await lostAmongDecoys(d, env, decoys.run);
          expect(decoys.gone(), "decoys signalled or swept by a reader").toEqual([]);
        } finally {
          await decoys.stop();
        }
        // Ended by the test, as a reader on its host would: every process of the dispatch (the agent and
        // what it started), by pid, until none is left.
        await waitFor("no process of the dispatch left", () =>
          reapDispatch(d.dispatchId) === 0 ? true : undefined,
        );
        expect(isAlive(d.agent)).toBe(false);
        // The cgroups its SIGKILLed supervisor made on the host (the same kernel's) are removed with them.
        reapCgroups(d.dispatchId);
      } finally {
        expect(reapAll(id === null ? [] : [id]), "processes left running").toBe(0);
      }
    },
  );

  it.each<[string, string]>([
    ["an ssh option as the host", "-oProxyCommand=touch /tmp/catherd-pwned"],
    ["a command after the host", "box;touch /tmp/catherd-pwned"],
    ["an empty host", ""],
  ])("refuses %s before ssh runs, and writes nothing", async (_title, host) => {
    const { home: h, env } = home();
    const before = ssh.calls();
    const result = await runCli(
      ["dispatch", "--json", "--placement", `ssh:${host}`, ...execArgs([{ exit: 0 }])],
      {
        env,
      },
    );
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { code: "E_INPUT_INVALID" } });
    expect(ssh.calls()).toBe(before);
    expect(dispatchFolders(h)).toEqual([]);
  });

  it("refuses a host that does not see catherd's home at the same path, before anything is written", async () => {
    const { home: h, env } = home();
    // The dispatcher runs in a mount namespace of its own whose home is a tmpfs only it sees: the host
    // finds the folder's path there, empty.
    const args = ["dispatch", "--json", "--placement", `ssh:${sshd.host}`, ...execArgs([{ exit: 0 }])];
    const out = spawnUnshared(h, [process.execPath, CLI_MAIN, ...args], env);
    expect(out.code).toBe(3);
    const error = (JSON.parse(out.stdout) as { error: { code: string; message: string; fix: string } }).error;
    expect(error.code).toBe("E_PLACEMENT_UNSHARED");
    expect(error.message).toContain(`${sshd.host} does not see catherd's home at ${h}`);
    expect(error.fix).toMatch(/same path/);
    // Nothing of the dispatch on either side: the tmpfs went with its namespace, and the home here is empty.
    expect(fs.readdirSync(h)).toEqual([]);
  });
});

/**
 * The dispatch `d` read, waited for and cancelled from two submitting hosts — this test's namespace, where
 * its agent is in /proc under another pid, and `among` the decoys', where its pids name decoys — while it
 * runs, then after its supervisor is SIGKILLed on the rig until it is recorded lost. Its agent runs on.
 */
async function lostAmongDecoys(
  d: Dispatched & { agent: number; supervisor: number },
  env: NodeJS.ProcessEnv,
  among: (args: readonly string[], env: NodeJS.ProcessEnv) => Promise<CliResult>,
): Promise<void> {
  const there = (args: readonly string[]) => among(args, env);
  expect(await rowOf(d.dispatchId, there)).toMatchObject({ state: "running" });
  const waited = await there(["wait", d.dispatchId, "--timeout", "1s", "--json"]);
  expect(waited.code, waited.stderr).toBe(124);
  // The supervisor dies on the host; its agent, in the host's PID namespace, runs on.
  process.kill(d.supervisor, "SIGKILL");
  const row = await eventually(
    "the dispatch recorded",
    async () => {
      const r = await rowOf(d.dispatchId, there);
      return r?.status == null ? undefined : r;
    },
    120_000,
  );
  expect(row).toMatchObject({ state: "recorded", status: "lost" });
  expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({
    error: {
      code: "E_SUPERVISOR_LOST",
      engine: {
        name: "ssh",
        jobId: d.placement?.jobId,
        state: "GONE",
        words: `ssh ${sshd.host}: supervisor ${d.placement?.jobId} is no longer running there`,
      },
    },
  });
  for (const run of [there, (args: readonly string[]) => runCli(args, { env, timeoutMs: 60_000 })]) {
    expect(await rowOf(d.dispatchId, run)).toMatchObject({ state: "recorded", status: "lost" });
    const cancelled = await run(["cancel", d.dispatchId, "--json"]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect((await run(["wait", d.dispatchId, "--json"])).code).toBe(1);
  }
  // Neither reader signalled the agent: it is the host's.
  expect(isAlive(d.agent)).toBe(true);
}

/** Runs `argv` in a mount namespace of its own where `home` is a fresh tmpfs; its exit and output. */
function spawnUnshared(home: string, argv: string[], env: NodeJS.ProcessEnv): CliResult {
  const script = 'mount -n -t tmpfs tmpfs "$1" && shift && exec "$@"';
  try {
    const stdout = execFileSync(
      "unshare",
      ["--mount", "--propagation", "private", "sh", "-c", script, "sh", home, ...argv],
      {
        env,
        encoding: "utf8",
        timeout: 60_000,
        cwd: "/tmp",
      },
    );
    return { code: 0, stdout, stderr: "" };
  } catch (error) {
    const e = error as { status: number | null; stdout: string; stderr: string };
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}
