import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

// catherd's programs are the files of src/bin/, one each: `catherd` (the package's bin), and those it starts
// in separate node processes — the supervisor, the promoter (a supervisor starts it when its run has a
// queue or its chain goes on), the notifier (whoever records a dispatch with a --notify or --run-notify
// starts it), the demo's simulated agent, and the opencode bridge (the agent process of a steerable opencode
// dispatch, which runs `opencode serve`: specs/steering.md, "The seam"), and the waker (it lives while work
// is parked for an account's reset, and starts it then: specs/quota.md). Where their files are depends on how catherd was built:
// bundled, `<name>.js` in dist/bin/ beside every chunk (scripts/bundle.mjs bundles each file of
// src/bin/); compiled by tsc alone, `dist/src/bin/<name>.js`.

/** The programs catherd starts by itself (the bin is started by the user). */
export type ProgramName =
  | "supervisor"
  | "promoter"
  | "notifier"
  | "simulated-agent"
  | "opencode-bridge"
  | "waker";

/**
 * The argument that starts the supervisor program in standby (src/dispatch/start/standby.ts); the next one names
 * the file its output goes to. Shared by the dispatcher that starts it and the program that obeys it.
 */
export const STANDBY_FLAG = "--standby";

/**
 * The name of a standby's own output file in the home, `.standby-<dispatcher pid>-<time>.out`: the file a
 * standby given no folder removes, and the next dispatcher removes once that pid is gone. A standby given
 * its folder at its start writes to the folder's supervisor.out instead, which is never removed.
 */
export const STANDBY_OUT_FILE = /^\.standby-(\d+)-[0-9a-z]+\.out$/;

/**
 * The argument that makes the promoter program (src/bin/promoter.ts) wait, once ready, until its
 * stdin gives a byte or ends before it promotes. Shared by the supervisor that starts it and the promoter.
 */
export const WHEN_RELEASED_FLAG = "--when-released";

/**
 * The argument that tells the promoter program it runs inside an engine's job (started by a supervisor an
 * engine placed): it then starts only dispatches an engine runs, never a local supervisor on a compute node.
 */
export const IN_ENGINE_JOB_FLAG = "--in-engine-job";

/**
 * The file to run with node for `name`, found from `fromUrl` (the caller's import.meta.url): the bundled
 * program beside it, else the compiled one under the nearest dist/ above it.
 */
export function programFile(name: ProgramName, fromUrl: string): string {
  const bundled = `${name}.js`;
  const compiled = `src/bin/${name}.js`;
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
