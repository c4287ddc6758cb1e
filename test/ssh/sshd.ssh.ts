import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HostIdentity, hostRelation, mayTouchProcesses } from "../../src/domain/state/host.js";
import { hostIdentity } from "../../src/infra/host-identity.js";
import { readProcStat } from "../../src/infra/proc-stat.js";
import { tempDir } from "../helpers/folders.js";
import { killPid } from "../helpers/processes.js";
import { type Sshd, sshdUnavailable, startSshd } from "../helpers/sshd.js";
import { waitFor } from "../helpers/wait.js";

// The rig of the SSH placement tests (test/helpers/sshd.ts) proves what those tests will lean on: a
// command over ssh runs under another host name and in another PID namespace, which catherd's host
// identity calls another host; a detached process outlives its session and dies with the rig; files are
// shared; a rig stopped mid-session makes ssh fail as a lost host does. Skipped with the reason where the
// rig cannot start; under CI it fails instead.

const why = sshdUnavailable();
if (why !== null && process.env.CI !== undefined && process.env.CI !== "") {
  throw new Error(`the ssh suite must run under CI, but ${why}`);
}
if (why !== null) console.warn(`skipping the ssh suite: ${why}`);

/** A process of the machine, by pid and start time: a pid alone may be taken again once it has ended. */
function identityOf(pid: number): string | null {
  const stat = readProcStat(pid);
  return stat === null ? null : `${pid}@${stat.startTime}`;
}

/**
 * Waits until the process runs `argv` (a shell forks before it execs: the pid a shell prints names its
 * fork until then) and returns its identity.
 */
function untilRunning(pid: number, argv: string[]): Promise<string> {
  return waitFor(`pid ${pid} running ${argv.join(" ")}`, () => {
    let cmdline: string[] = [];
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, -1);
    } catch {
      // gone
    }
    return cmdline.join("\0") === argv.join("\0") ? (identityOf(pid) ?? undefined) : undefined;
  });
}

/** `ssh catherd-remote <command>` as a running child, its stdout gathered. */
function spawnSsh(sshd: Sshd, command: string): { child: ChildProcess; out: () => string } {
  const child = spawn("ssh", [...sshd.sshArgs(), sshd.host, command], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
  });
  return { child, out: () => out };
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

/** The first line a child printed, once it has. */
function firstLine(out: () => string): Promise<string> {
  return waitFor("a line from ssh", () => {
    const end = out().indexOf("\n");
    return end === -1 ? undefined : out().slice(0, end);
  });
}

/** Runs `body` with a rig of its own, stopped whether it passes or not. */
async function withOwnRig(body: (sshd: Sshd) => Promise<void>): Promise<void> {
  const sshd = await startSshd();
  try {
    await body(sshd);
  } finally {
    await sshd.stop();
  }
}

describe.skipIf(why !== null)("the sshd rig", () => {
  let sshd: Sshd;

  beforeAll(async () => {
    sshd = await startSshd();
    console.info(`test sshd on 127.0.0.1:${sshd.port} up in ${sshd.startMs} ms`);
  });

  afterAll(async () => {
    await sshd?.stop();
  });

  it("runs a command under a host name of its own", async () => {
    const result = await sshd.exec("hostname");
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout.trim()).toBe(sshd.hostname);
    expect(result.stdout.trim()).not.toBe(os.hostname());
  });

  it("gives what runs over ssh a host identity that catherd calls another host", async () => {
    const result = await sshd.exec(
      "hostname; cat /proc/sys/kernel/random/boot_id; readlink /proc/self/ns/pid; echo $$",
    );
    expect(result.code).toBe(0);
    const [name, bootId, link, pid] = result.stdout.trim().split("\n") as [string, string, string, string];
    // What src/infra/host-identity.ts's readHostIdentity reads, read by the shell inside the namespace.
    const remote: HostIdentity = { name, bootId, pidNamespace: /\[(\d+)\]$/.exec(link)?.[1] ?? null };
    const here = hostIdentity();
    // The same kernel and boot, another PID namespace: its pids mean nothing in this /proc.
    expect(remote.bootId).toBe(here.bootId);
    expect(remote.pidNamespace).toBe(sshd.pidNamespace);
    expect(remote.pidNamespace).not.toBe(here.pidNamespace);
    expect(hostRelation(remote, here)).toBe("other");
    expect(hostRelation(here, remote)).toBe("other");
    expect(mayTouchProcesses(hostRelation(remote, here))).toBe(false);
    // Even under this machine's name, the namespace alone makes it another host.
    expect(hostRelation({ ...remote, name: here.name }, here)).toBe("other");
    expect(Number(pid)).toBeGreaterThan(1);
  });

  it("numbers a process over ssh otherwise than this machine does", async () => {
    const { child, out } = spawnSsh(sshd, "echo $$; exec sleep 600");
    let hostPid: number | null = null;
    try {
      const remotePid = Number(await firstLine(out));
      hostPid = sshd.hostPidOf(remotePid);
      expect(hostPid).not.toBeNull();
      expect(hostPid).not.toBe(remotePid);
      const status = fs.readFileSync(`/proc/${hostPid}/status`, "utf8");
      expect(status).toMatch(new RegExp(`^NSpid:\\s+${hostPid}\\s+${remotePid}$`, "m"));
      await untilRunning(hostPid as number, ["sleep", "600"]);
    } finally {
      // Started over ssh by this test: ended by the pid this machine sees.
      if (hostPid !== null) killPid(hostPid);
      child.kill("SIGKILL");
      await exitOf(child);
    }
  });

  it("shares the files: written over ssh, read here, and the other way", async () => {
    const shared = tempDir("catherd-ssh-shared-");
    fs.writeFileSync(path.join(shared, "from-here"), "here\n");
    const result = await sshd.exec(`cat '${shared}/from-here' && echo there > '${shared}/from-there'`);
    expect(result).toMatchObject({ code: 0, stdout: "here\n" });
    expect(fs.readFileSync(path.join(shared, "from-there"), "utf8")).toBe("there\n");
  });

  it("keeps a detached process past its session, and ends it with the namespace", async () => {
    await withOwnRig(async (own) => {
      const result = await own.exec("setsid nohup sleep 1000 >/dev/null 2>&1 & echo $!");
      // The session is over: ssh has returned.
      expect(result.code).toBe(0);
      const hostPid = own.hostPidOf(Number(result.stdout.trim()));
      expect(hostPid).not.toBeNull();
      const pid = hostPid as number;
      const before = await untilRunning(pid, ["sleep", "1000"]);
      // setsid made it a group (and session) leader.
      expect(readProcStat(pid)?.pgid).toBe(pid);
      expect((await own.exec("true")).code).toBe(0);
      expect(identityOf(pid)).toBe(before);
      const stopping = Date.now();
      await own.stop();
      console.info(`own rig: up in ${own.startMs} ms, stopped in ${Date.now() - stopping} ms`);
      expect(identityOf(pid)).not.toBe(before);
    });
  });

  it("makes ssh fail with 255 within a deadline when sshd stops mid-session", async () => {
    await withOwnRig(async (own) => {
      const { child, out } = spawnSsh(own, "echo up; exec sleep 1000");
      try {
        expect(await firstLine(out)).toBe("up");
        await own.stop();
        const code = await Promise.race([
          exitOf(child),
          new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), 10_000)),
        ]);
        expect(code).toBe(255);
        // stop() again: nothing left to stop, the folder already gone.
        await own.stop();
        expect(fs.existsSync(own.dir)).toBe(false);
      } finally {
        child.kill("SIGKILL");
        await exitOf(child);
      }
    });
  });
});
