import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { z } from "zod";
import { CatherdError } from "../../src/domain/errors.js";
import {
  cliStateUnderHome,
  loopbackPorts,
  type SandboxPolicy,
  stateFromEnvironment,
} from "../../src/domain/sandbox/sandbox.js";
import { loose } from "../../src/domain/schema-parts.js";
import type { Spec } from "../../src/domain/schemas.js";
import { FILES, fileIn, placeOf } from "../../src/folder/layout.js";
import { RAISED_EVENT } from "../../src/folder/sandbox-log.js";
import { appendLine, writeJsonAtomic } from "../../src/infra/atomic.js";
import type { Clock } from "../../src/infra/clock.js";
import { readJsonFile } from "../../src/infra/json-file.js";
import { catherdHome } from "../../src/infra/paths.js";
import { resolveExecutable } from "../../src/infra/which.js";
import { SANDBOX_STATUS_FD } from "../child.js";
import type { SupervisorLog } from "../log.js";
import { bridgeArgv, insidePort, proxyEnvironment, upArgv } from "./bridge.js";
import { type Denial, type SandboxProxy, startSandboxProxy } from "./proxy.js";
import { type SandboxMounts, type SandboxPlaces, sandboxMounts } from "./sandbox-mounts.js";

// The sandbox of one dispatch (specs/sandbox.md), raised by its supervisor just before the spawn and
// lowered after the stop: bubblewrap around the agent, and under files+net the proxy its connections go
// through. The supervisor itself stays outside: it reads, signals and records.

/** fence.json: what an adopter needs to serve the sandbox again. */
const sandboxFileSchema = loose({
  mode: z.enum(["files", "files+net"]),
  /** The proxy's unix sockets (a short path: a socket's path is at most 107 bytes); null under `files`. */
  socketDir: z.string().min(1).nullable(),
  proxyPort: z.number().int().positive().nullable(),
  loopbackPorts: z.array(z.number().int().positive()),
});
type SandboxFile = z.infer<typeof sandboxFileSchema>;

/** A sandbox raised: the command that runs the agent inside it, what it adds to its environment, its end. */
export interface RaisedSandbox {
  wrap(cmd: string, args: readonly string[]): { cmd: string; args: string[] };
  /** Where bubblewrap writes the agent's status (supervisor/child.ts). */
  statusPath: string;
  env: Record<string, string>;
  lower(): Promise<void>;
}

/** The uid the agent has inside: its own, or — for root, who could undo the mounts — an ordinary one. */
const UID_FOR_ROOT = 1000;

function sandboxLogger(dir: string, clock: Clock): (fields: Record<string, unknown>) => void {
  const file = fileIn(dir, FILES.sandboxLog);
  return (fields) => appendLine(file, JSON.stringify({ at: clock.wallNow().toISOString(), ...fields }));
}

/** What a sandbox reports through: the clock of sandbox.log's lines, and the supervisor's log. */
export interface SandboxDeps {
  clock: Clock;
  log: SupervisorLog;
}

/**
 * The sandbox's proxy, listening on its sockets (null under `files`, which has none): each refusal is a line
 * of sandbox.log and of the supervisor's log.
 */
function serveProxy(
  dir: string,
  file: SandboxFile,
  policy: SandboxPolicy,
  { clock, log }: SandboxDeps,
): Promise<SandboxProxy | null> {
  if (file.socketDir === null) return Promise.resolve(null);
  const say = sandboxLogger(dir, clock);
  return startSandboxProxy({
    socketDir: file.socketDir,
    rules: policy.allowNet,
    loopbackPorts: file.loopbackPorts,
    onDenied: (denial: Denial) => {
      say({ event: "denied", what: "net", ...denial });
      log("sandbox-denied", { what: "net", host: denial.host, port: denial.port });
    },
  });
}

/**
 * Raises the sandbox the spec asks for, or returns null when it asks none. Throws E_SANDBOX_UNAVAILABLE when
 * bubblewrap (or socat, for files+net) is gone since admission: the agent is not started unsandboxed.
 */
export async function raiseSandbox(
  dir: string,
  spec: Spec,
  env: Readonly<Record<string, string>>,
  deps: SandboxDeps,
): Promise<RaisedSandbox | null> {
  const policy = spec.sandbox;
  if (policy === undefined) return null;
  const bwrap = sandboxTools(policy, env);
  const net = policy.mode === "files+net";
  const { bridged: ports, proxyOnly } = loopbackPorts(policy.allowNet);
  const file: SandboxFile = {
    mode: policy.mode,
    socketDir: net ? fs.mkdtempSync("/tmp/catherd-sandbox-") : null,
    proxyPort: net ? insidePort(ports) : null,
    loopbackPorts: ports,
  };
  writeJsonAtomic(fileIn(dir, FILES.sandboxFile), file);
  const mounts = sandboxMounts(sandboxPlaces(dir, spec, policy, env));
  const identity = agentIdentity();
  sandboxLogger(dir, deps.clock)(raisedLine(policy, identity.uid, mounts));
  const proxy = await serveProxy(dir, file, policy, deps);
  deps.log("sandbox", {
    mode: policy.mode,
    writable: mounts.writable.length,
    hidden: mounts.hidden.length,
    ...(net && proxyOnly.length > 0 ? { proxyOnly } : {}),
  });
  const options = bwrapOptions(mounts.args, identity, net, spec.cwd);
  return {
    statusPath: fileIn(dir, FILES.sandboxStatus),
    env: net && file.proxyPort !== null ? proxyEnvironment(file.proxyPort) : {},
    wrap: (cmd, args) => ({ cmd: bwrap, args: [...options, "--", ...firstProgram(file, cmd, args)] }),
    lower: () => lowered(proxy, file),
  };
}

/** sandbox.log's first line, its `fence` line: the sandbox as raised, its mounts whole, who the agent is inside. */
function raisedLine(policy: SandboxPolicy, uid: number, mounts: SandboxMounts): Record<string, unknown> {
  return {
    event: RAISED_EVENT,
    mode: policy.mode,
    uid,
    writable: mounts.writable,
    readOnly: mounts.readOnly,
    hidden: mounts.hidden,
    allowNet: policy.mode === "files+net" ? policy.allowNet : null,
  };
}

/** bubblewrap's path, once it (and socat, which files+net needs) is found on the agent's PATH. */
function sandboxTools(policy: SandboxPolicy, env: Readonly<Record<string, string>>): string {
  const bwrap = resolveExecutable("bwrap", env.PATH ?? process.env.PATH ?? "");
  const socat = resolveExecutable("socat", env.PATH ?? process.env.PATH ?? "");
  if (bwrap === null || (policy.mode === "files+net" && socat === null)) {
    throw new CatherdError(
      "E_SANDBOX_UNAVAILABLE",
      `the sandbox cannot run on ${os.hostname()}: ${bwrap === null ? "bwrap" : "socat"} is not on PATH`,
      {
        fix: "install bubblewrap and socat there (catherd doctor says what the sandbox needs), or dispatch with --sandbox off",
      },
    );
  }
  return bwrap;
}

/** The places the sandbox's mounts are made of: the dispatch's own, its home's, its CLI's state. */
function sandboxPlaces(
  dir: string,
  spec: Spec,
  policy: SandboxPolicy,
  env: Readonly<Record<string, string>>,
): SandboxPlaces {
  const place = placeOf(dir);
  const home = place === null ? catherdHome(env) : path.dirname(path.dirname(place.runDir));
  const homes = [
    ...new Set([env.HOME, os.userInfo().homedir].filter((h): h is string => h !== undefined && h !== "")),
  ];
  return {
    backend: spec.backend,
    policy,
    dir,
    cwd: spec.cwd,
    worktree: spec.worktree?.path ?? null,
    tmp: env.TMPDIR ?? fileIn(dir, FILES.tmp),
    lockReports: fileIn(dir, FILES.lockReports),
    home,
    homes,
    stateElsewhere: stateFromEnvironment(spec.backend, env),
    stateToMake: [...stateUnderHome(spec, env), ...stateFromEnvironment(spec.backend, env)],
    sockets: unixSocketsOf(env),
  };
}

/** The CLI's state folders under the agent's HOME, when that HOME is a folder that exists. */
function stateUnderHome(spec: Spec, env: Readonly<Record<string, string>>): string[] {
  const home = env.HOME;
  if (home === undefined || !path.isAbsolute(home) || !fs.existsSync(home)) return [];
  return cliStateUnderHome(spec.backend)
    .filter((name) => !name.endsWith(".json"))
    .map((name) => path.join(home, name));
}

/** Who the agent is inside: its own uid and gid, or — for root, who could undo the mounts — ordinary ones. */
function agentIdentity(): { uid: number; gid: number } {
  const uid = process.getuid?.() ?? UID_FOR_ROOT;
  const gid = process.getgid?.() ?? UID_FOR_ROOT;
  return uid === 0 ? { uid: UID_FOR_ROOT, gid: UID_FOR_ROOT } : { uid, gid };
}

/** bubblewrap's options after the mounts: namespaces, identity, capabilities, session, folder, status. */
function bwrapOptions(
  mountArgs: readonly string[],
  identity: { uid: number; gid: number },
  net: boolean,
  cwd: string,
): string[] {
  return [
    ...mountArgs,
    "--unshare-user",
    "--uid",
    String(identity.uid),
    "--gid",
    String(identity.gid),
    "--disable-userns",
    "--unshare-ipc",
    // A PID namespace of its own, and a /proc that shows it alone: nothing inside can signal or read a
    // process of catherd's (its supervisor, bubblewrap's monitor) or of anyone else outside.
    "--unshare-pid",
    "--proc",
    "/proc",
    ...(net ? ["--unshare-net"] : []),
    "--cap-drop",
    "ALL",
    // A session and group of their own for bubblewrap's init (pid 1 inside) and the agent: a stop's
    // SIGTERM reaches the agent and not bubblewrap's monitor, which would die of it at once and take the
    // exit status with it; the init ignores it, as a namespace's init does a signal it has no handler
    // for, and exits with the agent (supervisor/child.ts).
    "--new-session",
    "--chdir",
    cwd,
    "--json-status-fd",
    String(SANDBOX_STATUS_FD),
  ];
}

/** What runs first inside the sandbox: the bridge under files+net, else the plain gate; both become the agent. */
function firstProgram(file: SandboxFile, cmd: string, args: readonly string[]): string[] {
  if (file.mode !== "files+net" || file.socketDir === null || file.proxyPort === null)
    return upArgv(cmd, args);
  return bridgeArgv(
    { socketDir: file.socketDir, proxyPort: file.proxyPort, loopbackPorts: file.loopbackPorts },
    cmd,
    args,
  );
}

/**
 * An adopter's part: serves the proxy of a sandbox its predecessor raised (fence.json) again, so that the
 * agent's next connection is served. Null when the dispatch has no sandbox, or one without network.
 */
export async function serveSandboxAgain(
  dir: string,
  spec: Spec,
  clock: Clock,
  log: SupervisorLog,
): Promise<RaisedSandbox | null> {
  const policy = spec.sandbox;
  if (policy === undefined) return null;
  const read = readJsonFile(fileIn(dir, FILES.sandboxFile), sandboxFileSchema);
  if (read.kind !== "ok") {
    log("sandbox-unreadable", {
      why: read.kind === "missing" ? "fence.json is missing" : read.error.message,
    });
    return null;
  }
  const file = read.value;
  if (file.socketDir !== null) fs.mkdirSync(file.socketDir, { recursive: true, mode: 0o700 });
  const proxy = await serveProxy(dir, file, policy, { clock, log });
  log("sandbox-served-again", { mode: file.mode });
  return {
    statusPath: fileIn(dir, FILES.sandboxStatus),
    env: {},
    wrap: (cmd, args) => ({ cmd, args: [...args] }),
    lower: () => lowered(proxy, file),
  };
}

/** The proxy closed and its sockets' folder removed: the end of a sandbox, whoever raised it. */
async function lowered(proxy: SandboxProxy | null, file: SandboxFile): Promise<void> {
  await proxy?.close();
  if (file.socketDir !== null) fs.rmSync(file.socketDir, { recursive: true, force: true });
}

/** The variable that points at the user's ssh agent (a string: code outside an engine's folder names no engine). */
const AGENT_SOCKET_VARIABLE = "SSH_AUTH_SOCK";

/** The unix sockets an environment points at that would lead out of the sandbox: an ssh agent, the user's runtime folder. */
function unixSocketsOf(env: Readonly<Record<string, string>>): string[] {
  const uid = process.getuid?.();
  return [
    env[AGENT_SOCKET_VARIABLE],
    env.XDG_RUNTIME_DIR,
    uid === undefined ? undefined : `/run/user/${uid}`,
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
    "/run/dbus/system_bus_socket",
  ].filter((p): p is string => p !== undefined && p !== "" && path.isAbsolute(p));
}
