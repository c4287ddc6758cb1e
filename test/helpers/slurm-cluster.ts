import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { isDeadState, readProcStat } from "../../src/infra/proc-stat.js";
import { listLinuxPids } from "../../src/infra/process-identity.js";
import { resolveExecutable } from "../../src/infra/which.js";

// A real one-node Slurm cluster for tests (Debian's slurm-wlm and munge): munged, slurmctld and slurmd in
// the foreground, as root, from a slurm.conf generated into a temporary folder that also holds the munge
// key and socket, the controller's state, the node's spool, the logs and the pid files. The daemons talk
// over loopback on two free ports (slurmctld itself listens on every address of the machine: Slurm 22.05
// has no setting to bind it to one), so clusters of several test runs never meet. Stopped by pid.

/** What a test needs to use the cluster: the environment its Slurm commands run with, and its facts. */
export interface SlurmCluster {
  /** The temporary folder holding everything of the cluster. */
  dir: string;
  /** slurm.conf, also in `env.SLURM_CONF`. */
  conf: string;
  clusterName: string;
  /** The node's name: this machine's short host name, as slurmd knows it. */
  node: string;
  /** The licenses slurm.conf defines, by name. */
  licenses: Record<string, number>;
  /** The environment for sbatch, squeue, scontrol, scancel: SLURM_CONF and the cluster's marker. */
  env: Record<string, string>;
  /** How long the start took, from the first spawn until the node was idle, in ms. */
  startMs: number;
}

/** The variable every daemon and every job of a test cluster carries (its folder): how leftovers are found. */
export const CLUSTER_MARK = "CATHERD_TEST_SLURM_CLUSTER";

/** The licenses of the test cluster: one backend capped at one, another at two. */
export const TEST_LICENSES: Record<string, number> = { codex: 1, "claude-code": 2, gemini: 3 };

const DAEMONS = ["munged", "slurmctld", "slurmd"] as const;
const CLIENTS = ["sbatch", "squeue", "scontrol", "scancel", "sinfo"] as const;

/**
 * Why a cluster cannot start on this machine (not root, a program missing), or null when it can. Where
 * the programs are missing, the fix is `.ci/run`'s install line.
 */
export function slurmUnavailable(): string | null {
  if (process.platform !== "linux") return "a test Slurm cluster needs Linux";
  if (process.getuid?.() !== 0) return "a test Slurm cluster runs its daemons as root, and this is not root";
  const missing = [...DAEMONS, ...CLIENTS].filter(
    (name) => resolveExecutable(name, process.env.PATH ?? "") === null,
  );
  if (missing.length > 0) {
    return `${missing.join(", ")} not found: apt-get install -y slurm-wlm munge`;
  }
  return null;
}

/** Starts the cluster; throws (with the daemons' logs) when it does not come up within `timeoutMs`. */
export async function startSlurmCluster(
  timeoutMs = 60_000,
): Promise<SlurmCluster & { stop(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "catherd-slurm-"));
  // munged refuses a socket whose folders are not searchable by all.
  fs.chmodSync(dir, 0o755);
  const clusterName = `ct${randomBytes(4).toString("hex")}`;
  const node = os.hostname().split(".")[0] as string;
  const [ctldPort, slurmdPort] = (await freePorts(2)) as [number, number];
  for (const sub of ["munge", "socket", "state", "spool", "log", "run"]) {
    fs.mkdirSync(path.join(dir, sub), { mode: sub === "socket" ? 0o755 : 0o700 });
  }
  const mungeKey = path.join(dir, "munge", "munge.key");
  fs.writeFileSync(mungeKey, randomBytes(128), { mode: 0o600 });
  const socket = path.join(dir, "socket", "munge.socket");
  const conf = path.join(dir, "slurm.conf");
  fs.writeFileSync(
    conf,
    slurmConf({ dir, clusterName, node, ctldPort, slurmdPort, socket, hardware: nodeHardware() }),
  );
  const env = { SLURM_CONF: conf, [CLUSTER_MARK]: dir };
  const daemons: ChildProcess[] = [];
  const stopNow = () => {
    for (const child of daemons) kill(child.pid, "SIGKILL");
    sweepCluster(dir);
  };
  // If the test run dies without its teardown, the daemons go with it.
  process.once("exit", stopNow);
  const started = Date.now();
  const cluster = {
    dir,
    conf,
    clusterName,
    node,
    licenses: TEST_LICENSES,
    env,
    startMs: 0,
    stop: async () => {
      process.removeListener("exit", stopNow);
      await stopCluster(dir, env, daemons);
    },
  };
  try {
    daemons.push(
      daemon(dir, "munged", [
        "--foreground",
        `--key-file=${mungeKey}`,
        `--socket=${socket}`,
        `--pid-file=${path.join(dir, "run", "munged.pid")}`,
        `--seed-file=${path.join(dir, "munge", "munged.seed")}`,
        `--log-file=${path.join(dir, "log", "munged.log")}`,
      ]),
    );
    await until(timeoutMs, "munged's socket", () => fs.existsSync(socket), dir);
    daemons.push(daemon(dir, "slurmctld", ["-D", "-f", conf]));
    daemons.push(daemon(dir, "slurmd", ["-D", "-f", conf]));
    await until(timeoutMs, `node ${node} idle`, () => nodeIdle(env, node), dir);
    cluster.startMs = Date.now() - started;
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

interface Hardware {
  line: string;
}

/** The node as `slurmd -C` sees it (CPUs, sockets, cores, memory), without its uptime. */
function nodeHardware(): Hardware {
  const out = execFileSync("slurmd", ["-C"], { encoding: "utf8", timeout: 10_000 });
  const line = out.split("\n").find((l) => l.startsWith("NodeName="));
  if (line === undefined) throw new Error(`slurmd -C printed no NodeName line:\n${out}`);
  return { line: line.replace(/^NodeName=\S+\s*/, "").trim() };
}

function slurmConf(o: {
  dir: string;
  clusterName: string;
  node: string;
  ctldPort: number;
  slurmdPort: number;
  socket: string;
  hardware: Hardware;
}): string {
  const at = (...parts: string[]) => path.join(o.dir, ...parts);
  const licenses = Object.entries(TEST_LICENSES)
    .map(([name, count]) => `${name}:${count}`)
    .join(",");
  return `${[
    `ClusterName=${o.clusterName}`,
    `SlurmctldHost=${o.node}(127.0.0.1)`,
    `SlurmctldPort=${o.ctldPort}`,
    `SlurmdPort=${o.slurmdPort}`,
    "AuthType=auth/munge",
    `AuthInfo=socket=${o.socket}`,
    "CredType=cred/munge",
    // Root runs everything: no slurm user to create on the machine.
    "SlurmUser=root",
    "SlurmdUser=root",
    `StateSaveLocation=${at("state")}`,
    `SlurmdSpoolDir=${at("spool")}`,
    `SlurmctldPidFile=${at("run", "slurmctld.pid")}`,
    `SlurmdPidFile=${at("run", "slurmd.pid")}`,
    `SlurmctldLogFile=${at("log", "slurmctld.log")}`,
    `SlurmdLogFile=${at("log", "slurmd.log")}`,
    "SlurmctldDebug=info",
    "SlurmdDebug=info",
    // No cgroup of its own in a container without systemd: processes tracked through /proc, no task
    // binding, no accounting gathered (catherd's supervisor holds its agent in a cgroup of its own).
    "ProctrackType=proctrack/linuxproc",
    "TaskPlugin=task/none",
    "JobAcctGatherType=jobacct_gather/none",
    "AccountingStorageType=accounting_storage/none",
    "JobCompType=jobcomp/none",
    "MpiDefault=none",
    "SwitchType=switch/none",
    "SchedulerType=sched/backfill",
    // Batch jobs are scheduled as they come (Slurm delays them up to 3 s by default, to batch a burst).
    "SchedulerParameters=batch_sched_delay=0",
    "SelectType=select/cons_tres",
    "SelectTypeParameters=CR_Core_Memory",
    "ReturnToService=2",
    // A cancelled job's processes get SIGKILL 5 s after SIGTERM (the default is 30 s).
    "KillWait=5",
    `Licenses=${licenses}`,
    `NodeName=${o.node} NodeAddr=127.0.0.1 ${o.hardware.line} State=UNKNOWN`,
    `PartitionName=main Nodes=${o.node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:12`,
  ].join("\n")}\n`;
}

/** Ports the kernel says are free on loopback now. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

function daemon(dir: string, program: string, args: string[]): ChildProcess {
  const out = fs.openSync(path.join(dir, "log", `${program}.out`), "a");
  const child = spawn(program, args, {
    stdio: ["ignore", out, out],
    env: { ...process.env, SLURM_CONF: path.join(dir, "slurm.conf"), [CLUSTER_MARK]: dir },
  });
  fs.closeSync(out);
  child.once("error", () => {});
  return child;
}

function nodeIdle(env: Record<string, string>, node: string): boolean {
  try {
    const out = execFileSync("sinfo", ["-h", "-n", node, "-o", "%T"], {
      encoding: "utf8",
      env: { ...process.env, ...env },
      timeout: 5000,
      stdio: ["ignore", "pipe", "ignore"],
    });
    return out.trim() === "idle";
  } catch {
    return false;
  }
}

async function until(timeoutMs: number, what: string, check: () => boolean, dir: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`the test Slurm cluster did not come up (${what}) in ${timeoutMs} ms:\n${logs(dir)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The last lines each daemon wrote: what a failed start shows. */
function logs(dir: string): string {
  return fs
    .readdirSync(path.join(dir, "log"))
    .map((name) => {
      const text = fs
        .readFileSync(path.join(dir, "log", name), "utf8")
        .trim()
        .split("\n")
        .slice(-15);
      return `--- ${name}\n${text.join("\n")}`;
    })
    .join("\n");
}

/**
 * Cancels every job of the cluster and waits for them to leave their node, then stops slurmd, slurmctld
 * and munged (SIGTERM, then SIGKILL after 10 s), kills whatever still carries the cluster's mark (a job
 * step the node left behind), and removes the folder.
 */
async function stopCluster(dir: string, env: Record<string, string>, daemons: ChildProcess[]): Promise<void> {
  try {
    execFileSync("scancel", ["--full", `--user=${os.userInfo().username}`], {
      env: { ...process.env, ...env },
      timeout: 10_000,
      stdio: "ignore",
    });
    await settle(15_000, () => jobsLeft(env) === 0);
  } catch {
    // the controller is down already: the sweep below ends what the jobs left
  }
  for (const child of [...daemons].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    kill(child.pid, "SIGTERM");
    const exited = await settle(10_000, () => child.exitCode !== null || child.signalCode !== null);
    if (!exited) kill(child.pid, "SIGKILL");
  }
  // A job step still ending (slurmstepd outlives slurmd by design) is killed, until none is left.
  const swept = await settle(10_000, () => sweepCluster(dir) === 0);
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  if (!swept)
    throw new Error(`processes of the test Slurm cluster outlived it: ${markedProcesses(dir).join(", ")}`);
}

function jobsLeft(env: Record<string, string>): number {
  const out = execFileSync("squeue", ["-h", "-o", "%i"], {
    encoding: "utf8",
    env: { ...process.env, ...env },
    timeout: 5000,
  });
  return out.split("\n").filter((line) => line.trim() !== "").length;
}

async function settle(timeoutMs: number, check: () => boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/** Kills (SIGKILL) every live process carrying the cluster's mark: what the cluster started. */
export function sweepCluster(dir: string): number {
  const marked = markedProcesses(dir);
  for (const pid of marked) kill(pid, "SIGKILL");
  return marked.length;
}

/** Pids of the live processes whose environment carries CLUSTER_MARK=<dir>. */
export function markedProcesses(dir: string): number[] {
  const mark = `${CLUSTER_MARK}=${dir}`;
  return listLinuxPids().filter((pid) => {
    if (pid === process.pid) return false;
    try {
      const environ = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      const stat = readProcStat(pid);
      return environ.includes(mark) && stat !== null && !isDeadState(stat);
    } catch {
      return false;
    }
  });
}

function kill(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined || pid <= 1) return;
  try {
    process.kill(pid, signal);
  } catch {
    // gone
  }
}
