import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

// catherd starts programs of its own in separate node processes: the supervisor, the promoter (a supervisor
// starts it after its record when the run has a queue), the notifier (whoever records a dispatch with a
// --notify or --run-notify starts it) and the demo's simulated agent. Where their files are depends on how catherd was built: bundled, each is a file in
// dist/bin/ beside every chunk; compiled by tsc alone, each sits at its place in dist/ (or is reached
// from src/ when the code runs from source under vitest).

const PROGRAMS = {
  supervisor: { bundled: "supervisor.js", compiled: "supervisor/main.js" },
  promoter: { bundled: "promoter.js", compiled: "src/dispatch/promoter-main.js" },
  notifier: { bundled: "notifier.js", compiled: "src/dispatch/notifier-main.js" },
  "simulated-agent": { bundled: "simulated-agent.js", compiled: "src/demo/simulated-agent.js" },
} as const;

export type ProgramName = keyof typeof PROGRAMS;

/**
 * The argument that starts the supervisor program in standby (src/dispatch/standby.ts); the next one names
 * the file its output goes to. Shared by the dispatcher that starts it and the program that obeys it.
 */
export const STANDBY_FLAG = "--standby";

/**
 * The argument that makes the promoter program (src/dispatch/promoter-main.ts) wait, once ready, until its
 * stdin gives a byte or ends before it promotes. Shared by the supervisor that starts it and the promoter.
 */
export const WHEN_RELEASED_FLAG = "--when-released";

/**
 * The file to run with node for `name`, found from `fromUrl` (the caller's import.meta.url): the bundled
 * program beside it, else the compiled one under the nearest dist/ above it.
 */
export function programFile(name: ProgramName, fromUrl: string): string {
  const { bundled, compiled } = PROGRAMS[name];
  const here = path.dirname(fileURLToPath(fromUrl));
  const beside = path.join(here, bundled);
  if (fs.existsSync(beside)) return beside;
  for (let dir = here; ; dir = path.dirname(dir)) {
    if (path.basename(dir) === "dist") return path.join(dir, compiled);
    const dist = path.join(dir, "dist");
    if (fs.existsSync(path.join(dist, compiled))) return path.join(dist, compiled);
    if (path.dirname(dir) === dir) return path.join(here, bundled);
  }
}
