import * as path from "node:path";
import { CatherdError } from "../../domain/errors.js";
import { runSsh, sshError } from "./command.js";
import { exportLine, shellQuote } from "./quote.js";

// Starting a dispatch's supervisor on a host over ssh (specs/placement.md, "SSH"): one ssh call runs a
// POSIX sh script, read from ssh's stdin (`sh -s`) so that no value — catherd's home, a --pass-env secret —
// is on any command line a `ps` there shows. The script enters the folder, sets the variables, finds
// node and catherd as the user would, and starts the supervisor detached (its own session, stdin from
// /dev/null, its output appended to ssh.out in the folder); it prints the supervisor's pid and the host's
// name, and ssh returns: nothing of the supervisor holds the connection.

/** The supervisor's stdout and stderr on the host, in the dispatch folder. */
export const SUPERVISOR_OUTPUT = "ssh.out";
/** The variable that tells a supervisor which host it was placed on (isThisProcess). */
export const PLACED_ON_VARIABLE = "CATHERD_SSH_HOST";
/** The bound on the start: a login, a login shell for PATH, a fork. */
export const SSH_START_TIMEOUT_MS = 30_000;
/** What precedes the login shell's PATH in its output: whatever a profile printed before it is cut off. */
const LOGIN_PATH_MARK = "catherd-login-path=";
/** The exit status of the script when the host lacks what it needs (a folder, node, catherd). */
const NOT_READY_EXIT = 3;

/** What the start needs: the folder, the supervisor command as the submitting host runs it, the variables. */
export interface StartRequest {
  host: string;
  dir: string;
  /** `[node, supervisor program, dir]` by the submitting host's paths. */
  command: readonly string[];
  /** The variables the supervisor gets (sshd passes none): CATHERD_*, the --pass-env names. */
  env: Readonly<Record<string, string>>;
}

/**
 * The script the host's `sh -s` runs. node and the supervisor program are taken at the submitting host's
 * paths where the host has them (a shared install, as a cluster's nodes have); else from PATH as the
 * user's login shell sets it (`$SHELL -lc`: /etc/profile, ~/.profile), the program beside the `catherd`
 * found there. The supervisor gets that PATH too: its agent's CLI is found as the user would.
 */
export function startScript(request: StartRequest): string {
  const [node = "node", program = "", dir = request.dir] = request.command;
  const notReady = (what: string) => `{ echo "catherd: ${what}" >&2; exit ${NOT_READY_EXIT}; }`;
  return [
    `cd ${shellQuote(request.dir)} || ${notReady("cannot enter the dispatch folder on $(uname -n)")}`,
    ...Object.entries(request.env).map(([name, value]) => exportLine(name, value)),
    exportLine(PLACED_ON_VARIABLE, request.host),
    ...findingLines({ node, program }),
    `[ -n "$node" ] || ${notReady("node is not on the PATH of $here: $PATH")}`,
    `[ -n "$program" ] || ${notReady("catherd is not on the PATH of $here: $PATH")}`,
    "if command -v setsid >/dev/null 2>&1; then detach=setsid; else detach=nohup; fi",
    `$detach "$node" "$program" ${shellQuote(dir)} </dev/null >>${shellQuote(path.join(request.dir, SUPERVISOR_OUTPUT))} 2>&1 &`,
    'echo "catherd-supervisor $! $here"',
    "",
  ].join("\n");
}

/**
 * The lines that find node and the supervisor program on the host, for the start and for readiness alike:
 * PATH becomes the login shell's; `node` and `program` hold the submitting host's paths where the host
 * has them (`found=here`), else what the login PATH gives (`found=PATH`), each empty when not found.
 */
export function findingLines(here: { node: string; program: string }): string[] {
  return [
    `node=${shellQuote(here.node)}; program=${shellQuote(here.program)}; found=here`,
    // The host's name by sshd's PATH: the login PATH that replaces it may hold no uname.
    "here=$(uname -n)",
    // What a profile prints on stdout (a greeting) comes before the marker, and is cut off with it.
    `login=$("\${SHELL:-/bin/sh}" -lc 'printf "\\n${LOGIN_PATH_MARK}%s" "$PATH"' </dev/null 2>/dev/null) || login=`,
    `case $login in *${LOGIN_PATH_MARK}?*) PATH=\${login##*${LOGIN_PATH_MARK}} ;; esac; export PATH`,
    `if [ ! -x "$node" ] || [ ! -f "$program" ]; then`,
    "  found=PATH",
    "  node=$(command -v node) || node=",
    '  if bin=$(command -v catherd); then program=$(dirname "$(readlink -f "$bin")")/supervisor.js; else program=; fi',
    "fi",
  ];
}

/** What the start script printed: the supervisor's pid on the host, and the host's name (null if not said). */
export interface StartedOverSsh {
  pid: number;
  node: string | null;
}

/** The supervisor's pid and its host's name, as the script printed them; else the failure as the one error. */
export async function startOverSsh(request: StartRequest): Promise<StartedOverSsh> {
  const asked = `start the supervisor on ${request.host}`;
  const result = await runSsh(request.host, "sh -s", {
    input: startScript(request),
    timeoutMs: SSH_START_TIMEOUT_MS,
  });
  if (!result.ok) throw sshError(result, request.host, asked);
  const said = /^catherd-supervisor (\d+)(?: (\S+))?$/m.exec(result.stdout);
  const pid = said?.[1];
  if (pid === undefined) {
    throw new CatherdError(
      "E_ENGINE_REFUSED",
      `cannot ${asked}: it printed no pid (${result.stdout.slice(0, 200)})`,
      {
        fix: `check that ssh ${request.host} sh -s runs a POSIX shell script there`,
      },
    );
  }
  return { pid: Number(pid), node: said?.[2] ?? null };
}
