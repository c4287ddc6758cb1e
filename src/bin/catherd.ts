#!/usr/bin/env node
// The catherd program (the package's bin). `catherd supervise <dir>` runs the supervisor program in this
// process, loaded only then; every other verb is the command line. Only this entry knows both: the CLI
// never imports the supervisor, nor the supervisor the CLI. Everything is imported after the compile
// cache is on, so that it serves every module of the program (src/infra/compile-cache.ts).
import { enableCompileCache } from "../infra/compile-cache.js";

enableCompileCache();
const argv = process.argv.slice(2);
const main =
  argv[0] === "supervise"
    ? import("../../supervisor/supervisor-main.js").then(({ superviseMain }) =>
        superviseMain(argv.slice(1), { announce: true }),
      )
    : import("../cli/main.js").then(({ cliMain }) => cliMain(argv));
main.then(
  (code) => {
    process.exitCode = code;
  },
  async (error: unknown) => {
    const { reportError } = await import("../infra/report-error.js");
    process.exitCode = reportError(error, argv.includes("--json"));
  },
);
