// catherd's command line: one verb, one lazily loaded module, so that each command pays only for itself.
// `catherd supervise` is not among them: src/main.ts runs the supervisor program for it.
import { dismiss, startStandbySupervisor } from "../dispatch/standby.js";
import { CatherdError } from "../domain/errors.js";
import { catherdHome } from "../infra/paths.js";
import { reportError } from "../infra/report-error.js";
import { type Command, executeCommand } from "./kit.js";

type Loader = () => Promise<Command<unknown>>;

const VERBS: Record<string, Loader> = {
  dispatch: async () => (await import("./dispatch-command.js")).dispatchCommand as Command<unknown>,
  status: async () => (await import("./status-command.js")).statusCommand as Command<unknown>,
  show: async () => (await import("./show-command.js")).showCommand as Command<unknown>,
  logs: async () => (await import("./logs-command.js")).logsCommand as Command<unknown>,
  wait: async () => (await import("./wait-command.js")).waitCommand as Command<unknown>,
  result: async () => (await import("./result-command.js")).resultCommand as Command<unknown>,
  cancel: async () => (await import("./cancel-command.js")).cancelCommand as Command<unknown>,
  clean: async () => (await import("./clean-command.js")).cleanCommand as Command<unknown>,
  doctor: async () => (await import("./doctor-command.js")).doctorCommand as Command<unknown>,
  demo: async () => (await import("./demo-command.js")).demoCommand as Command<unknown>,
  guide: async () => (await import("./guide-command.js")).guideCommand as Command<unknown>,
  mcp: async () => (await import("./mcp-command.js")).mcpCommand as Command<unknown>,
  lock: async () => (await import("./lock-command.js")).lockCommand as Command<unknown>,
};

const USAGE = `catherd: a supervisor for coding-agent CLIs

usage:
  catherd dispatch --backend <b> …     admit a brief and start its supervisor (catherd dispatch --help)
  catherd status [--all]               what is running, what finished and how
  catherd show <name|id|dir>           everything about one dispatch
  catherd logs <name|id> [--follow]    its events as human lines (--raw: as written)
  catherd wait [<name|id>…] [--any]    block until recorded; exit 0 when all ok, 124 on --timeout
  catherd result <name|id>             the record and the reply
  catherd cancel <name|id> [--wait]    stop it
  catherd clean [--older-than 7d]      remove old recorded dispatches and their worktrees (--dry-run)
  catherd demo                         a simulated agent, supervised end to end (nothing to install)
  catherd doctor [<backend>…]          which agent CLIs are installed, their versions, the fix
  catherd mcp                          the same verbs as MCP tools, on stdio (specs/mcp.md)
  catherd guide                        how an orchestrating agent uses catherd well
  catherd lock -- <command>            run a test suite or a build in one of the machine's heavy slots
  catherd supervise <dispatch-dir>     supervise a dispatch folder in the foreground
  catherd help                         this text
  catherd --version                    the version of catherd

Every command takes --json. See README.md and specs/cli.md.`;

/** Runs one command line (without `supervise`); resolves to the process exit code. */
export async function cliMain(argv: readonly string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === "help" || verb === "--help" || verb === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return verb === undefined ? 2 : 0;
  }
  if (verb === "--version") return printVersion(argv.includes("--json"));
  // `lock` handles its own signals: it leaves its queue, or passes them on to the command it runs.
  if (verb !== "lock") exitOnInterrupt(argv.includes("--json"));
  const load = VERBS[verb];
  if (load === undefined) {
    return reportError(
      new CatherdError("E_INPUT_INVALID", `unknown command ${JSON.stringify(verb)}`, { fix: "catherd help" }),
      argv.includes("--json"),
    );
  }
  // dispatch: the supervisor's node start-up and loading overlap this process's own (src/dispatch/standby.ts).
  const own = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  const wantsStandby = verb === "dispatch" && !own.includes("--help") && !own.includes("-h");
  const standby = wantsStandby ? startStandbySupervisor(catherdHome()) : null;
  try {
    return await executeCommand(await load(), rest, { standby, stdinIsOurs: true });
  } finally {
    if (standby !== null) dismiss(standby);
  }
}

/**
 * Ctrl-C (SIGINT) ends a command where it stands with E_INTERRUPTED: exit 130 and, with --json, an error
 * object instead of node's silent death by signal. Locks held are released on the way out (proper-lockfile
 * removes them on exit); dispatches already started go on under their own supervisors.
 */
function exitOnInterrupt(json: boolean): void {
  process.once("SIGINT", () => {
    const interrupted = new CatherdError("E_INTERRUPTED", "interrupted (SIGINT)", {
      fix: "run the command again; catherd status shows the dispatches, which go on without it",
    });
    process.exit(reportError(interrupted, json));
  });
}

/** `catherd --version`: the version of the installed package (read only now, never on a start path). */
async function printVersion(json: boolean): Promise<number> {
  const { catherdVersion } = await import("../infra/version.js");
  const version = catherdVersion(import.meta.url);
  if (version === null) {
    return reportError(
      new CatherdError("E_INTERNAL", "catherd's package.json cannot be found beside its program", {
        fix: "reinstall catherd: npm install -g catherd",
      }),
      json,
    );
  }
  process.stdout.write(json ? `${JSON.stringify({ version })}\n` : `${version}\n`);
  return 0;
}
