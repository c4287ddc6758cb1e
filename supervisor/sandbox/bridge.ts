import { SANDBOX_GO_FD, SANDBOX_UP_FD } from "../child.js";
import { portSocket, proxySocket } from "./proxy.js";

// Inside a `files+net` sandbox the agent's network namespace has its own loopback and nothing else. The
// bridge, the first program run inside it, listens there — on the proxy's port and on every allowed
// loopback port — and carries each connection over a unix socket to the supervisor's proxy (socat, one
// listener per port, a child per connection). It starts the agent only once every listener is up, so
// that the agent's first connection finds one; then it becomes the agent (exec).

/** What the sandbox says on stderr when its supervisor ended before it let the agent run. */
export const GATE_CLOSED =
  "catherd sandbox: the supervisor ended before it let the agent run; nothing was run";

/** The proxy's port inside the sandbox: the first from 3128 that no allowed loopback port takes. */
export function insidePort(loopbackPorts: readonly number[]): number {
  let port = 3128;
  while (loopbackPorts.includes(port)) port += 1;
  return port;
}

/**
 * Tells the supervisor the sandbox is up (supervisor/child.ts, SANDBOX_UP_FD) and lets go of that pipe, then
 * waits at the gate (SANDBOX_GO_FD) until the supervisor has named the agent in proc.json and says `go`:
 * the agent never runs unnamed, so a supervisor that dies at any moment of the start leaves either an
 * agent an adopter can find or none at all. A gate that closes without `go` (the supervisor died) ends
 * the sandbox with 125, its words on stderr, nothing run.
 *
 * The agent then runs in the foreground of this shell, which outlives it by a moment: it ends every other
 * process of the sandbox's PID namespace (`kill -1` there reaches that namespace alone, and neither its
 * init nor the shell) and exits with the agent's status, so that nothing of a sandbox — the bridge's
 * listeners, what the agent left running — outlives its agent, whether a supervisor is there to sweep
 * or not. Its traps only keep it alive through a stop's signals, which reach the agent's group whole:
 * a trap runs once the foreground command has ended, and the agent itself starts with their defaults.
 */
const UP = [
  // A supervisor dead before this line leaves the pipe without a reader: the write fails (SIGPIPE ignored
  // for it alone, the agent gets the default back) and the closed gate below ends the sandbox.
  `trap "" PIPE; printf up >&${SANDBOX_UP_FD} 2>/dev/null; exec ${SANDBOX_UP_FD}>&-; trap - PIPE`,
  `IFS= read -r gate <&${SANDBOX_GO_FD} || gate=""`,
  `exec ${SANDBOX_GO_FD}<&-`,
  `if [ "$gate" != go ]; then echo "${GATE_CLOSED}" >&2; kill -KILL -1 2>/dev/null; exit 125; fi`,
  "trap : HUP INT QUIT TERM",
  '"$@"',
  "status=$?",
  "kill -KILL -1 2>/dev/null",
  "exit $status",
].join("\n");

/** How long the bridge may take to listen: socat starts in milliseconds; a loaded machine is slower. */
const READY_TRIES = 1000;

/**
 * The bridge as `sh -c`: `$1` the socket folder's proxy socket, `$2` the inside proxy port, then `PORT
 * SOCKET` pairs, `--`, the agent's command. A listener that ends before it listens (socat said why on
 * stderr: a port below 1024, say, which the sandbox's dropped capabilities forbid), or is not up within
 * READY_TRIES × 10 ms, ends the bridge with 125 before the agent starts, its other listeners stopped.
 *
 * Each listener is started without the up pipe (SANDBOX_UP_FD) and the gate (SANDBOX_GO_FD): only the bridge
 * may hold them, so that the supervisor hears it end with the bridge, whatever the listeners do.
 */
const BRIDGE_SCRIPT = `
listeners=""
listen() {
  socat "TCP-LISTEN:$1,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:$2" ${SANDBOX_UP_FD}>&- ${SANDBOX_GO_FD}<&- &
  listeners="$listeners $1:$!"
}
# A listener that ended is a zombie until the shell reaps it: judged by its state, not by kill -0.
alive() { st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; st=\${st##*) }; [ "\${st%% *}" != Z ]; }
fail() { echo "catherd sandbox: $1" >&2; for pair in $listeners; do kill "\${pair#*:}" 2>/dev/null; done; exit 125; }
ready() {
  hex=$(printf '%04X' "$1"); tries=0
  until grep -q ":$hex 00000000:0000 0A" /proc/net/tcp; do
    alive "$2" || fail "the bridge of port $1 could not listen"
    tries=$((tries + 1))
    [ "$tries" -gt ${READY_TRIES} ] && fail "the bridge of port $1 did not start"
    sleep 0.01
  done
}
while [ "$1" != "--" ]; do listen "$1" "$2"; shift 2; done
shift
for pair in $listeners; do ready "\${pair%%:*}" "\${pair#*:}"; done
${UP}
`;

/** The first program of a sandbox without a network of its own: it says the sandbox is up and becomes the agent. */
export function upArgv(cmd: string, args: readonly string[]): string[] {
  return ["/bin/sh", "-c", UP, "catherd-sandbox", cmd, ...args];
}

/** Where the bridge carries connections: the proxy's folder of sockets, its port inside, the loopback ports. */
export interface BridgeEnds {
  socketDir: string;
  proxyPort: number;
  loopbackPorts: readonly number[];
}

/** The bridge's command line, to run inside the sandbox in front of `cmd args`. */
export function bridgeArgv(ends: BridgeEnds, cmd: string, args: readonly string[]): string[] {
  const { socketDir, proxyPort, loopbackPorts } = ends;
  const pairs = [
    String(proxyPort),
    proxySocket(socketDir),
    ...loopbackPorts.flatMap((port) => [String(port), portSocket(socketDir, port)]),
  ];
  return ["/bin/sh", "-c", BRIDGE_SCRIPT, "catherd-sandbox", ...pairs, "--", cmd, ...args];
}

/** The agent's proxy settings: every HTTP client it runs goes through the bridge, loopback included. */
export function proxyEnvironment(proxyPort: number): Record<string, string> {
  const url = `http://127.0.0.1:${proxyPort}`;
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    // Nothing bypasses the proxy: a request it does not see cannot be told to sandbox.log.
    NO_PROXY: "",
    no_proxy: "",
  };
}
