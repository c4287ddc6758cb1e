// The detached supervisor program: `catherd supervise <dir>` and what `dispatch` launches. It loads only
// what supervision needs; the CLI's other commands are never imported here.
import * as fs from "node:fs";
import * as path from "node:path";
import { CatherdError } from "../src/domain/errors.js";
import { FILES, fileIn, isDispatchFolder } from "../src/folder/layout.js";
import { STANDBY_FLAG, STANDBY_OUT_FILE } from "../src/infra/programs.js";
import { reportError } from "../src/infra/report-error.js";
import { systemDeps } from "./deps.js";
import { superviseDispatch } from "./supervise.js";

const SUPERVISE_USAGE = `usage: catherd supervise <dispatch-dir> [--json]

Supervises a dispatch folder in the foreground: runs its spec.json's command in a process group (and a
cgroup) of its own with stdin from its stdinPath, watches it by the spec's limits, stops everything it
started at the end, and writes exit.json and record.json. The folder needs spec.json (and the brief it
names): specs/dispatch-folder.md. Ctrl-C stops the agent and records the dispatch cancelled.

options:
  --json                  print an error as the error object`;

/**
 * Runs the supervisor on the one folder in `args`; resolves to the process exit code (specs/cli.md, "Exit
 * codes"). Anything but one dispatch folder (one holding spec.json or admit.json) is refused with exit 2
 * before a single file is written. `--json` prints an error as the CLI's error object. SIGTERM, SIGINT and
 * SIGHUP stop the agent and record the dispatch `cancelled`; after SIGINT (Ctrl-C on a foreground
 * `catherd supervise`) the exit code is 130, as for every command.
 */
export async function superviseMain(
  args: readonly string[],
  options: { announce?: boolean; given?: boolean } = {},
): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(`${SUPERVISE_USAGE}\n`);
    return 0;
  }
  const json = args.includes("--json");
  const [dirArg, ...extra] = args.filter((arg) => arg !== "--json");
  const refuse = (message: string, fix: string) =>
    reportError(new CatherdError("E_INPUT_INVALID", message, { fix }), json);
  if (dirArg === undefined || dirArg === "") {
    return refuse("missing <dispatch-dir>", "catherd supervise <dispatch-dir>");
  }
  if (extra.length > 0) {
    return refuse(`unexpected argument ${JSON.stringify(extra[0])}`, "catherd supervise <dispatch-dir>");
  }
  const dir = path.resolve(dirArg);
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    return refuse(`${dir} is not a folder`, "give the path of a dispatch folder");
  }
  if (!isDispatchFolder(dir)) {
    return refuse(
      `${dir} is not a dispatch folder (it has no spec.json)`,
      "write spec.json (see specs/dispatch-folder.md), or use catherd dispatch",
    );
  }
  const interrupt = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => interrupt.abort(signal);
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, onSignal);
  // The supervisor runs detached; a write to a closed stdout/stderr must not kill it.
  process.stdout.on("error", () => {});
  process.stderr.on("error", () => {});
  const deps = systemDeps();
  const code = await superviseDispatch(dir, deps, interrupt.signal, { given: options.given === true });
  if (options.announce === true) {
    const { announceRecord } = await import("./announce.js");
    announceRecord(dir, json, deps.clock.now());
  }
  if (interrupt.signal.reason !== "SIGINT") return code;
  return reportError(
    new CatherdError("E_INTERRUPTED", `the supervisor of ${dir} was interrupted (SIGINT)`, {
      fix: `see how the dispatch ended: catherd show ${dir}`,
    }),
    json,
  );
}

/**
 * Standby (src/dispatch/start/standby.ts), how a dispatcher starts every local supervisor: what the claim
 * takes is loaded already (supervise.ts); the folder is the argument after the output file when it was
 * known at the start, else the one line its stdin gives. Nothing on stdin means the dispatcher refused,
 * failed or died: leave no trace (remove its own output file, never a folder's supervisor.out), exit 0.
 */
async function standbyMain(outFile: string | undefined, givenDir: string | undefined): Promise<number> {
  const dir = givenDir ?? (await readAll(process.stdin)).trim();
  const own = outFile !== undefined && STANDBY_OUT_FILE.test(path.basename(outFile)) ? outFile : null;
  if (dir === "") {
    if (own !== null) fs.rmSync(own, { force: true });
    return 0;
  }
  // The folder down the pipe is the whole hand-over: the output file follows it here, not before.
  if (own !== null && isDispatchFolder(dir)) moveOutput(own, dir);
  try {
    process.chdir(dir);
  } catch {
    // superviseMain refuses a path that is not a dispatch folder, with the reason
  }
  return superviseMain([dir], { given: true });
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Moves a standby's own output file (in the home) to its folder's supervisor.out; else it stays. */
function moveOutput(own: string, dir: string): void {
  try {
    fs.renameSync(own, fileIn(dir, FILES.supervisorOut));
  } catch {
    // not a dispatch folder (refused next, with the reason), or gone: the output stays where it is
  }
}

/**
 * The supervisor program (src/bin/supervisor.ts runs it): `<dir> [--json]`, or standby with `--standby
 * <outFile> [<dir>]`. Exits the process with the code.
 */
export function runSupervisorProgram(args: readonly string[]): void {
  const main = args[0] === STANDBY_FLAG ? standbyMain(args[1], args[2]) : superviseMain(args);
  main.then(
    (code) => process.exit(code),
    (error: unknown) => process.exit(reportError(error, args.includes("--json"))),
  );
}
