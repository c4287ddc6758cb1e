// catherd's command line: one verb, one lazily loaded module, so that each command pays only for itself.
// `catherd supervise` is not among them: src/bin/catherd.ts runs the supervisor program for it.
import * as fs from "node:fs";
import { StandbyReserve } from "../dispatch/start/standby-reserve.js";
import { CatherdError } from "../domain/errors.js";
import { catherdHome } from "../infra/paths.js";
import { reportError } from "../infra/report-error.js";
import { parkedDir } from "../quota/home-files.js";
import { type Command, executeCommand, helpEntry } from "./command-io.js";

/**
 * A verb: how its module is loaded, and whether it starts a supervisor — then one is started as this
 * process's first act, before the module loads, so that the two node start-ups overlap
 * (dispatch/start/standby.ts); the use case decides what it supervises.
 */
interface Verb {
  load(): Promise<Command<unknown>>;
  startsSupervisor?: true;
  /** It handles Ctrl-C and SIGTERM itself (lock: it leaves its queue, or passes them to its command). */
  ownsSignals?: true;
}

const VERBS: Record<string, Verb> = {
  dispatch: {
    load: async () => (await import("./dispatch-command.js")).dispatchCommand as Command<unknown>,
    startsSupervisor: true,
  },
  status: { load: async () => (await import("./status-command.js")).statusCommand as Command<unknown> },
  show: { load: async () => (await import("./show-command.js")).showCommand as Command<unknown> },
  logs: { load: async () => (await import("./logs-command.js")).logsCommand as Command<unknown> },
  wait: { load: async () => (await import("./wait-command.js")).waitCommand as Command<unknown> },
  result: { load: async () => (await import("./result-command.js")).resultCommand as Command<unknown> },
  cancel: { load: async () => (await import("./cancel-command.js")).cancelCommand as Command<unknown> },
  send: { load: async () => (await import("./send-command.js")).sendCommand as Command<unknown> },
  answer: { load: async () => (await import("./answer-command.js")).answerCommand as Command<unknown> },
  clean: { load: async () => (await import("./clean-command.js")).cleanCommand as Command<unknown> },
  usage: { load: async () => (await import("./usage-command.js")).usageCommand as Command<unknown> },
  doctor: { load: async () => (await import("./doctor-command.js")).doctorCommand as Command<unknown> },
  demo: { load: async () => (await import("./demo-command.js")).demoCommand as Command<unknown> },
  guide: { load: async () => (await import("./guide-command.js")).guideCommand as Command<unknown> },
  mcp: { load: async () => (await import("./mcp-command.js")).mcpCommand as Command<unknown> },
  ui: { load: async () => (await import("./ui-command.js")).uiCommand as Command<unknown> },
  account: { load: async () => (await import("./account-command.js")).accountCommand as Command<unknown> },
  budget: { load: async () => (await import("./budget-command.js")).budgetCommand as Command<unknown> },
  lock: {
    load: async () => (await import("./lock-command.js")).lockCommand as Command<unknown>,
    ownsSignals: true,
  },
};

/** The verbs as help lists them: what to type, and what it does. */
const HELP_LINES: readonly { verb: string; synopsis: string; summary: string }[] = [
  {
    verb: "dispatch",
    synopsis: "--backend <b> …",
    summary: "admit a brief and start its supervisor (--help: its flags)",
  },
  { verb: "status", synopsis: "[--all]", summary: "what is running, what finished and how" },
  { verb: "show", synopsis: "<name|id|dir>", summary: "everything about one dispatch" },
  {
    verb: "logs",
    synopsis: "<name|id> [--follow]",
    summary: "its events as human lines (--raw: as written)",
  },
  {
    verb: "wait",
    synopsis: "[<name|id>…] [--any]",
    summary: "block until recorded; exit 0 when all ok, 124 on --timeout",
  },
  { verb: "result", synopsis: "<name|id>", summary: "the record and the reply" },
  { verb: "cancel", synopsis: "<name|id> [--wait]", summary: "stop it" },
  {
    verb: "send",
    synopsis: '<name|id> "text" [--interrupt]',
    summary: "a message to a running steerable agent (specs/steering.md)",
  },
  {
    verb: "answer",
    synopsis: "<name|id> <q> --allow|--deny|text",
    summary: "answer what the agent asked (a permission, a question)",
  },
  {
    verb: "usage",
    synopsis: "[--by <what>] [--since 7d]",
    summary: "what the dispatches spent: tokens and dollars, summed",
  },
  {
    verb: "clean",
    synopsis: "[--older-than 7d]",
    summary: "remove old recorded dispatches and their worktrees (--dry-run)",
  },
  {
    verb: "account",
    synopsis: "add <name> | list | remove <name>",
    summary: "the accounts of each CLI and their windows (specs/quota.md)",
  },
  {
    verb: "budget",
    synopsis: "set <scope> --per <p> | list | remove <scope>",
    summary: "budgets per day, week or month for the home, a CLI, an account or a tag",
  },
  { verb: "demo", synopsis: "", summary: "a simulated agent, supervised end to end (nothing to install)" },
  {
    verb: "doctor",
    synopsis: "[<backend>…]",
    summary: "which agent CLIs are installed, their versions, the fix",
  },
  { verb: "mcp", synopsis: "", summary: "the same verbs as MCP tools, on stdio (specs/mcp.md)" },
  { verb: "ui", synopsis: "[--run <r>]", summary: "a live dashboard in the browser (specs/ui.md)" },
  { verb: "guide", synopsis: "", summary: "how an orchestrating agent uses catherd well" },
  {
    verb: "lock",
    synopsis: "-- <command>",
    summary: "run a test suite or a build in one of the machine's heavy slots",
  },
  { verb: "supervise", synopsis: "<dispatch-dir>", summary: "supervise a dispatch folder in the foreground" },
  { verb: "help", synopsis: "", summary: "this text (--json: the same as data)" },
  { verb: "--version", synopsis: "", summary: "the version of catherd" },
];

/** Where `catherd help` starts each verb's summary: a usage longer than the column puts it on the next line. */
const SUMMARY_COLUMN = 37;

function usageText(): string {
  const lines = HELP_LINES.map(({ verb, synopsis, summary }) =>
    helpEntry(`  catherd ${verb}${synopsis === "" ? "" : ` ${synopsis}`}`, summary, SUMMARY_COLUMN),
  );
  return [
    "catherd: a supervisor for coding-agent CLIs",
    "",
    "usage:",
    ...lines,
    "",
    "Each verb explains itself with --help and answers in JSON with --json (supervise: its errors).",
    "See README.md and specs/cli.md.",
  ].join("\n");
}

/** `catherd help`: the verbs as text, or with --json as `{verbs: [{verb, synopsis, summary}]}`. */
function printHelp(json: boolean): void {
  process.stdout.write(json ? `${JSON.stringify({ verbs: HELP_LINES })}\n` : `${usageText()}\n`);
}

/** Runs one command line (without `supervise`); resolves to the process exit code. */
export async function cliMain(argv: readonly string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === "help" || verb === "--help" || verb === "-h") {
    printHelp(argv.includes("--json"));
    return verb === undefined ? 2 : 0;
  }
  if (verb === "--version") return printVersion(argv.includes("--json"));
  const found = VERBS[verb];
  if (found?.ownsSignals !== true) exitOnInterrupt(argv.includes("--json"));
  if (found === undefined) {
    return reportError(
      new CatherdError("E_INPUT_INVALID", `unknown command ${JSON.stringify(verb)}`, { fix: "catherd help" }),
      argv.includes("--json"),
    );
  }
  const own = rest.includes("--") ? rest.slice(0, rest.indexOf("--")) : rest;
  const standbys =
    found.startsSupervisor === true && !own.includes("--help") && !own.includes("-h")
      ? new StandbyReserve()
      : undefined;
  standbys?.prime(catherdHome());
  // An agent's `catherd lock` runs often and inside a dispatch, and `cancel` must not start what it is
  // cancelling (specs/dispatch.md §7): both leave parked work to every other command.
  if (verb !== "lock" && verb !== "cancel") await wakeParkedWork(catherdHome());
  try {
    return await executeCommand(await found.load(), rest, {
      stdinIsOurs: true,
      ...(standbys === undefined ? {} : { standbys }),
    });
  } finally {
    standbys?.close();
  }
}

/**
 * Starts parked work that is due and a waker for the rest (dispatch/waker.ts, specs/quota.md): after a
 * reboot, the first command does. A home with nothing parked costs one failed directory read; a failure
 * here never stops the command asked for.
 */
async function wakeParkedWork(home: string): Promise<void> {
  try {
    if (fs.readdirSync(parkedDir(home)).length === 0) return;
  } catch {
    return;
  }
  const [{ wakeParked }, { systemClock }] = await Promise.all([
    import("../dispatch/waker.js"),
    import("../infra/clock.js"),
  ]);
  await wakeParked(home, systemClock).catch(() => {});
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
  const { catherdVersion } = await import("../infra/catherd-version.js");
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
