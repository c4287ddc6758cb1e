import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { readProcStat } from "../../src/infra/proc-stat.js";
import { listLinuxPids } from "../../src/infra/process-identity.js";
import { resolveExecutable } from "../../src/infra/which.js";
import { tempDir } from "./folders.js";
import { pidInNamespace, pidNamespaceOf } from "./processes.js";

// A real sshd for tests, standing in for another host: OpenSSH's sshd in the foreground, as root, from an
// sshd_config generated into a temp folder that also holds its host key, the client's key, the
// authorized_keys, the known_hosts, the ssh client's config, the pid file and the logs. It listens on one
// free loopback port and runs in a PID, UTS and mount namespace of its own (`unshare --pid --uts --mount
// --fork --mount-proc`), under a host name of its own: what runs over ssh sees its own pids and its own
// host name, and the same files (only /proc, /run and /etc/profile differ: see INNER). Nothing of the
// machine's own sshd or /etc/ssh is read or changed. Stopped by pid; the namespace's death ends everything
// in it.

/** The ssh client config's alias of the rig: `ssh -F <config> catherd-remote <command>`. */
export const REMOTE_HOST = "catherd-remote";

/** What a command run over ssh gave: its exit code (255: ssh itself failed; null: killed) and output. */
export interface SshResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Sshd {
  /** The temp folder holding everything of the rig; removed by stop(). */
  dir: string;
  /** The alias to give ssh with sshArgs() (REMOTE_HOST). */
  host: string;
  /** The loopback port sshd listens on. */
  port: number;
  /** The account logged in as: this process's own (root). */
  user: string;
  /** The host name inside the namespace (`hostname` over ssh): never this machine's. */
  hostname: string;
  /**
   * A folder of the rig's, first on PATH of a login shell on the rig (its /etc/profile puts it there):
   * a program put in it is what the host's login PATH finds. Empty until a test fills it.
   */
  loginBin: string;
  /** The inode of the namespace's PID namespace, as /proc/<pid>/ns/pid shows it ("4026532180"). */
  pidNamespace: string;
  /** How long the start took, from the first key until `ssh catherd-remote true` succeeded, in ms. */
  startMs: number;
  /** The options that make ssh use the rig's config: `ssh ...sshArgs() catherd-remote <command>`. */
  sshArgs(): string[];
  /** Runs `command` through the remote login shell, with a deadline (then killed: code null). */
  exec(command: string, timeoutMs?: number): Promise<SshResult>;
  /** The pid this machine sees for a process whose pid inside the namespace is `remotePid`, or null. */
  hostPidOf(remotePid: number): number | null;
  /** Ends the namespace (SIGTERM to sshd, SIGKILL after a deadline), then removes the folder. Idempotent. */
  stop(): Promise<void>;
}

/** How long sshd has to exit on SIGTERM before the namespace is killed; as long again for the kill. */
const STOP_GRACE_MS = 5000;

/** How many ports are tried when the one picked was taken before sshd could bind it. */
const PORT_ATTEMPTS = 3;

/** The rig's folder first on its login PATH (Sshd.loginBin). */
const LOGIN_BIN = "login-bin";

/** sshd's usual homes, searched after PATH: a non-root PATH often lacks the sbin folders. */
const SBIN = ["/usr/sbin", "/usr/local/sbin"];

/**
 * The namespace's first process (pid 1, `sh -c INNER hostname dir sshd`): names the UTS namespace, gives
 * sshd the privilege-separation folder it insists on (/run/sshd, compiled in) without touching the
 * machine's /run — an overlay on /run, its upper layer on a tmpfs of the rig's, both visible only in this
 * mount namespace (`mount -n`: no /run/mount/utab written) — then becomes sshd: sshd is the namespace's
 * init, so its death kills everything started over ssh, and it reaps the orphans (its SIGCHLD handler
 * waits for any child). The host's /etc/profile is the machine's with one line added, bound over it in
 * this mount namespace only: LOGIN_BIN first on PATH of its login shells. A machine without an
 * /etc/profile gives the rig none, and LOGIN_BIN is on no PATH there.
 */
const INNER = [
  "set -eu",
  'hostname "$1"',
  'mount -n -t tmpfs -o mode=0700 tmpfs "$2/run"',
  'mkdir "$2/run/upper" "$2/run/work"',
  'mount -n -t overlay overlay -o "lowerdir=/run,upperdir=$2/run/upper,workdir=$2/run/work" /run',
  "mkdir -p -m 0755 /run/sshd",
  "if [ -f /etc/profile ]; then",
  '  cat /etc/profile > "$2/profile"',
  `  printf 'PATH="%s/${LOGIN_BIN}:$PATH"; export PATH\n' "$2" >> "$2/profile"`,
  '  mount -n --bind "$2/profile" /etc/profile',
  "fi",
  'exec "$3" -D -E "$2/sshd.log" -f "$2/sshd_config"',
].join("\n");

/** The programs the rig runs, resolved once (null: missing). */
function programs() {
  const searchPath = process.env.PATH ?? "";
  const find = (name: string, extra: string[] = []) =>
    resolveExecutable(name, [searchPath, ...extra].join(path.delimiter));
  return {
    // sshd re-executes itself for each connection, so it must be started by its absolute path.
    sshd: find("sshd", SBIN),
    ssh: find("ssh"),
    sshKeygen: find("ssh-keygen"),
    unshare: find("unshare"),
    setpriv: find("setpriv"),
    sh: find("sh"),
    hostname: find("hostname"),
    mount: find("mount", ["/usr/bin", "/bin"]),
  };
}

/**
 * Why the rig cannot start on this machine (not Linux, not root, a program missing), or null when it can.
 * Where programs are missing, the fix is the install line it names.
 */
export function sshdUnavailable(): string | null {
  if (process.platform !== "linux") return "the sshd rig needs Linux namespaces";
  if (process.getuid?.() !== 0) return "the sshd rig unshares a PID namespace, which needs root";
  const missing = Object.entries(programs())
    .filter(([, found]) => found === null)
    .map(([name]) => name);
  if (missing.length > 0) {
    return `${missing.join(", ")} not found: apt-get install -y openssh-server openssh-client util-linux hostname`;
  }
  return null;
}

/**
 * Starts the rig and returns once a port accepts and `ssh catherd-remote true` succeeds; throws, with
 * sshd's log, when it does not within `timeoutMs` (the rig is stopped first). The folder comes from
 * tempDir(): started in a test, stop it in that test (try/finally); in beforeAll, stop it in afterAll.
 */
export async function startSshd(
  timeoutMs = 30_000,
  options: { setEnv?: Readonly<Record<string, string>> } = {},
): Promise<Sshd> {
  const why = sshdUnavailable();
  if (why !== null) throw new Error(why);
  const started = Date.now();
  const deadline = started + timeoutMs;
  const dir = tempDir("catherd-sshd-");
  fs.mkdirSync(path.join(dir, "run"));
  fs.mkdirSync(path.join(dir, LOGIN_BIN));
  const keys = generateKeys(dir);
  const user = os.userInfo().username;
  const hostname = `catherd-remote-${randomBytes(3).toString("hex")}`;
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const files = writeConfigs(dir, { port, user, keys, setEnv: options.setEnv ?? {} });
    const ns = launch(dir, hostname);
    const outcome = await untilReady(ns, files.client, port, deadline);
    if (outcome === "ready") {
      return rig({
        dir,
        port,
        user,
        hostname,
        ns,
        clientConfig: files.client,
        startMs: Date.now() - started,
      });
    }
    await ns.stop();
    if (outcome === "port taken" && attempt < PORT_ATTEMPTS) continue;
    const log = tail(dir);
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`the test sshd did not come up (${outcome}) in ${timeoutMs} ms:\n${log}`);
  }
}

interface Keys {
  hostKey: string;
  /** The host's public key line (type and key), for known_hosts. */
  hostPublic: string;
  clientKey: string;
  clientPublic: string;
}

/** An ed25519 host key and client key, without passphrases. */
function generateKeys(dir: string): Keys {
  const make = (name: string) => {
    const file = path.join(dir, name);
    execFileSync(programs().sshKeygen as string, ["-q", "-N", "", "-t", "ed25519", "-C", name, "-f", file], {
      stdio: "ignore",
      timeout: 10_000,
    });
    const [type, key] = fs.readFileSync(`${file}.pub`, "utf8").trim().split(/\s+/);
    return { file, publicLine: `${type} ${key}` };
  };
  const host = make("host_ed25519");
  const client = make("client_ed25519");
  return {
    hostKey: host.file,
    hostPublic: host.publicLine,
    clientKey: client.file,
    clientPublic: client.publicLine,
  };
}

/**
 * A loopback port free now: bound to port 0, read back, released. Another process may take it before
 * sshd binds it; startSshd then sees sshd exit on the bind and tries another (PORT_ATTEMPTS).
 */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Writes sshd_config, authorized_keys, known_hosts and the client's config for `port`. */
function writeConfigs(
  dir: string,
  o: { port: number; user: string; keys: Keys; setEnv: Readonly<Record<string, string>> },
): { client: string } {
  const at = (name: string) => path.join(dir, name);
  fs.writeFileSync(at("authorized_keys"), `${o.keys.clientPublic}\n`, { mode: 0o600 });
  // The host key is known before the first connection: StrictHostKeyChecking can stay on.
  fs.writeFileSync(at("known_hosts"), `[127.0.0.1]:${o.port} ${o.keys.hostPublic}\n`, { mode: 0o600 });
  fs.writeFileSync(at("sshd_config"), sshdConfig(dir, o));
  fs.writeFileSync(at("ssh_config"), clientConfig(dir, o.port, o.user, o.keys));
  return { client: at("ssh_config") };
}

/**
 * `setEnv`: variables sshd sets in every session over what it sets itself (sshd_config's SetEnv, which
 * overrides even HOME): a test gives the account a HOME of its own, whose ~/.profile its login shell reads.
 */
function sshdConfig(
  dir: string,
  {
    port,
    user,
    keys,
    setEnv,
  }: { port: number; user: string; keys: Keys; setEnv: Readonly<Record<string, string>> },
): string {
  return lines([
    ...Object.entries(setEnv).map(([name, value]) => `SetEnv ${name}="${value}"`),
    `ListenAddress 127.0.0.1:${port}`,
    `HostKey "${keys.hostKey}"`,
    `PidFile "${path.join(dir, "sshd.pid")}"`,
    // An absolute path: ~/.ssh of the account is neither read nor needed.
    `AuthorizedKeysFile "${path.join(dir, "authorized_keys")}"`,
    `AllowUsers ${user}`,
    "PubkeyAuthentication yes",
    "PasswordAuthentication no",
    "KbdInteractiveAuthentication no",
    "HostbasedAuthentication no",
    // No PAM: no /etc/pam.d read, no session of the machine's opened.
    "UsePAM no",
    // The keys' folder is under the world-writable temp folder, which StrictModes would refuse.
    "StrictModes no",
    `PermitRootLogin ${user === "root" ? "prohibit-password" : "no"}`,
    // Nothing of the account's own runs at login (~/.ssh/rc, ~/.ssh/environment).
    "PermitUserRC no",
    "PermitUserEnvironment no",
    "AllowAgentForwarding no",
    "AllowTcpForwarding no",
    "X11Forwarding no",
    "PrintMotd no",
    "PrintLastLog no",
    "UseDNS no",
    // Engine tests open many connections at once; the default (10:30:100) drops some beyond ten.
    "MaxStartups 100",
    "LogLevel VERBOSE",
  ]);
}

/** The client's whole config (`ssh -F` reads neither ~/.ssh/config nor /etc/ssh/ssh_config). */
function clientConfig(dir: string, port: number, user: string, keys: Keys): string {
  return lines([
    `Host ${REMOTE_HOST}`,
    "  HostName 127.0.0.1",
    `  Port ${port}`,
    `  User ${user}`,
    `  IdentityFile "${keys.clientKey}"`,
    "  IdentitiesOnly yes",
    "  IdentityAgent none",
    `  UserKnownHostsFile "${path.join(dir, "known_hosts")}"`,
    "  GlobalKnownHostsFile /dev/null",
    "  StrictHostKeyChecking yes",
    "  UpdateHostKeys no",
    "  BatchMode yes",
    "  ConnectTimeout 5",
    // A server that vanishes without closing the connection is noticed in about 10 s.
    "  ServerAliveInterval 5",
    "  ServerAliveCountMax 2",
    "  ControlMaster no",
    "  ControlPath none",
    "  LogLevel ERROR",
  ]);
}

function lines(list: string[]): string {
  return `${list.join("\n")}\n`;
}

/** The running namespace: `setpriv … unshare …`, the process this rig started. */
interface Namespace {
  child: ChildProcess;
  exited(): boolean;
  /** The namespace's init (sshd) as this machine numbers it: unshare's child; null before or after it. */
  init(): number | null;
  /** Kills the namespace at once, without waiting (the `exit` hook). */
  killNow(): void;
  /** SIGTERM to sshd, SIGKILL to both after STOP_GRACE_MS; resolves once unshare has exited. */
  stop(): Promise<void>;
}

/**
 * Starts the namespace. setpriv's parent-death signal kills unshare if this test process dies without
 * stopping the rig (tied to the thread that spawned it: a vitest fork's main thread), and unshare's
 * --kill-child then kills the namespace's init, and with it the namespace.
 */
function launch(dir: string, hostname: string): Namespace {
  const p = programs();
  const out = fs.openSync(path.join(dir, "namespace.out"), "a");
  const args = ["--pdeathsig", "KILL", "--", p.unshare as string];
  args.push("--pid", "--uts", "--mount", "--fork", "--mount-proc", "--kill-child", "--");
  args.push(p.sh as string, "-c", INNER, "sh", hostname, dir, p.sshd as string);
  const child = spawn(p.setpriv as string, args, { stdio: ["ignore", out, out], cwd: "/" });
  fs.closeSync(out);
  child.once("error", () => {});
  const exit = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const init = () => (child.pid === undefined || exited() ? null : childOf(child.pid));
  const killNow = () => {
    signal(init(), "SIGKILL");
    signal(child.pid ?? null, "SIGKILL");
  };
  const stop = async () => {
    if (exited()) return;
    // unshare blocks SIGTERM while it waits for its child: sshd is told, and its namespace ends with it.
    const sshd = init();
    if (sshd === null) signal(child.pid ?? null, "SIGKILL");
    else signal(sshd, "SIGTERM");
    if (await within(exit, STOP_GRACE_MS)) return;
    killNow();
    if (!(await within(exit, STOP_GRACE_MS))) {
      throw new Error(`the test sshd's namespace (pid ${child.pid}) outlived SIGKILL by ${STOP_GRACE_MS} ms`);
    }
  };
  return { child, exited, init, killNow, stop };
}

/** The one child of `parent`, found by its parent pid (unshare forks one: the namespace's init). */
function childOf(parent: number): number | null {
  return listLinuxPids().find((pid) => readProcStat(pid)?.ppid === parent) ?? null;
}

type Outcome = "ready" | "port taken" | "exited" | "timed out";

/** Waits, by the deadline, for the port to accept and `ssh … true` to succeed, or for sshd to exit. */
async function untilReady(
  ns: Namespace,
  clientConfig: string,
  port: number,
  deadline: number,
): Promise<Outcome> {
  for (;;) {
    if (ns.exited()) return bindFailed(path.dirname(clientConfig)) ? "port taken" : "exited";
    if (Date.now() > deadline) return "timed out";
    // The login proves it is this rig's sshd: a stranger on the port has another host key.
    if ((await accepts(port)) && (await runSsh(clientConfig, "true", 5000)).code === 0) return "ready";
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether sshd's log says it could not bind its port. */
function bindFailed(dir: string): boolean {
  return /Cannot bind any address|Address already in use/.test(readOr(path.join(dir, "sshd.log")));
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.setTimeout(1000);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.once("timeout", () => done(false));
  });
}

/** `ssh -F <config> catherd-remote <command>`, with a deadline; never rejects. */
function runSsh(clientConfig: string, command: string, timeoutMs: number): Promise<SshResult> {
  return new Promise((resolve) => {
    execFile(
      programs().ssh as string,
      ["-F", clientConfig, REMOTE_HOST, command],
      { timeout: timeoutMs, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

function rig(o: {
  dir: string;
  port: number;
  user: string;
  hostname: string;
  ns: Namespace;
  clientConfig: string;
  startMs: number;
}): Sshd {
  const init = o.ns.init();
  const pidNamespace = init === null ? null : pidNamespaceOf(init);
  if (pidNamespace === null) throw new Error("the test sshd's namespace has no init after it came up");
  // If the test run exits without stop(), the namespace goes with it.
  const killNow = () => o.ns.killNow();
  process.once("exit", killNow);
  let stopping: Promise<void> | null = null;
  return {
    dir: o.dir,
    host: REMOTE_HOST,
    port: o.port,
    user: o.user,
    hostname: o.hostname,
    loginBin: path.join(o.dir, LOGIN_BIN),
    pidNamespace,
    startMs: o.startMs,
    sshArgs: () => ["-F", o.clientConfig],
    exec: (command, timeoutMs = 30_000) => runSsh(o.clientConfig, command, timeoutMs),
    hostPidOf: (remotePid) => pidInNamespace(pidNamespace, remotePid),
    stop: () => {
      stopping ??= (async () => {
        process.removeListener("exit", killNow);
        try {
          await o.ns.stop();
        } finally {
          fs.rmSync(o.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
        }
      })();
      return stopping;
    },
  };
}

/** Resolves whether `promise` settled within `ms`. */
function within(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([promise.then(() => true), timeout]).finally(() => clearTimeout(timer));
}

function signal(pid: number | null, name: NodeJS.Signals): void {
  if (pid === null || pid <= 1) return;
  try {
    process.kill(pid, name);
  } catch {
    // gone
  }
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return "";
  }
}

/** The last lines of sshd's log and of the namespace's own output: what a failed start shows. */
function tail(dir: string): string {
  return ["sshd.log", "namespace.out"]
    .map((name) => `--- ${name}\n${readOr(path.join(dir, name)).trim().split("\n").slice(-15).join("\n")}`)
    .join("\n");
}
