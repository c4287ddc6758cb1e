import { finalizeFromSummary, oneLine } from "./line-parsing.js";
import type { Backend } from "./types.js";

/** Any long command: every output line is progress and the exit code decides. */
export const execBackend: Backend = {
  id: "exec",
  label: "exec",
  command: "args",
  defaultBin: "",
  binEnv: "CATHERD_EXEC_BIN",
  installHint: "",
  versionArgs: [],
  minVersion: null,
  needsBrief: false,
  reportsUsage: false,
  plainText: true,
  answerSchemaFlag: false,
  defaults: { idleMs: 10 * 60_000, wallMs: 2 * 3_600_000, graceAfterFinalMs: null },
  plan(request) {
    return {
      cmd: request.bin,
      args: [...request.extraArgs],
      env: {},
      stdin: request.briefPath === null ? "none" : "brief",
    };
  },
  parse(line) {
    return { progress: true, describe: oneLine(line) };
  },
  finalize: finalizeFromSummary,
};
