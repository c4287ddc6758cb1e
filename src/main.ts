#!/usr/bin/env node
// The catherd program (the package's bin). `catherd supervise <dir>` runs the supervisor program in this
// process, loaded only then; every other verb is the command line. Only this entry knows both: the CLI
// never imports the supervisor, nor the supervisor the CLI.
import { cliMain } from "./cli/main.js";
import { reportError } from "./infra/report-error.js";

const argv = process.argv.slice(2);
const main =
  argv[0] === "supervise"
    ? import("../supervisor/main.js").then(({ superviseMain }) => superviseMain(argv.slice(1)))
    : cliMain(argv);
main.then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = reportError(error, argv.includes("--json"));
  },
);
