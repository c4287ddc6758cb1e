#!/usr/bin/env node
// catherd's command line: one verb, one lazily loaded module, so that each command pays only for itself.
import { CatherdError } from "../domain/errors.js";
import { type Command, reportError, runCommand } from "./kit.js";

type Loader = () => Promise<Command<unknown>>;

const VERBS: Record<string, Loader> = {
  dispatch: async () => (await import("./dispatch-command.js")).dispatchCommand as Command<unknown>,
};

const USAGE = `catherd: a supervisor for coding-agent CLIs

usage:
  catherd dispatch --backend <b> …     admit a brief and start its supervisor (catherd dispatch --help)
  catherd supervise <dispatch-dir>     supervise a dispatch folder in the foreground
  catherd help                         this text

Every command takes --json. See README.md and specs/cli.md.`;

async function main(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (verb === undefined || verb === "help" || verb === "--help" || verb === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return verb === undefined ? 2 : 0;
  }
  if (verb === "supervise") {
    const { superviseMain } = await import("../../supervisor/main.js");
    return superviseMain(rest[0]);
  }
  const load = VERBS[verb];
  if (load === undefined) {
    return reportError(
      new CatherdError("E_INPUT_INVALID", `unknown command ${JSON.stringify(verb)}`, { fix: "catherd help" }),
      argv.includes("--json"),
    );
  }
  return runCommand(await load(), rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = reportError(error, process.argv.includes("--json"));
  },
);
