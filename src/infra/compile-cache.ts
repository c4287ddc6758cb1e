import * as fs from "node:fs";
import * as module from "node:module";
import * as path from "node:path";
import { catherdHome } from "./paths.js";

// Node's on-disk cache of compiled code (Node >= 22.1): each catherd process starts by compiling its
// bundle, which the cache turns into a read of V8's own output. It lives in the catherd home, private to
// the user (0700), keyed by node on each file's content and node's version, so a new build or another
// runtime never reads stale code. A machine without it (Node 20), a home that does not exist yet, or a
// cache that cannot be written only means compiling as before: this never fails a command.

/** The cache folder under a catherd home. */
export const COMPILE_CACHE_DIR = ".compile-cache";

type WithCompileCache = typeof module & { enableCompileCache?: (dir: string) => unknown };

/**
 * Turns the compile cache on for this process, before its modules are loaded (call it from the entry,
 * then import the rest). `CATHERD_COMPILE_CACHE=0` leaves it off; a NODE_COMPILE_CACHE of the user's own
 * has already turned node's on, and wins; a process collecting coverage (NODE_V8_COVERAGE) compiles.
 */
export function enableCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  const enable = (module as WithCompileCache).enableCompileCache;
  if (enable === undefined || env.CATHERD_COMPILE_CACHE === "0" || env.NODE_COMPILE_CACHE !== undefined)
    return;
  // Code read from the cache carries no coverage counters: a process measured for coverage compiles.
  if (env.NODE_V8_COVERAGE !== undefined && env.NODE_V8_COVERAGE !== "") return;
  try {
    const home = catherdHome(env);
    if (!fs.statSync(home, { throwIfNoEntry: false })?.isDirectory()) return;
    const dir = path.join(home, COMPILE_CACHE_DIR);
    fs.mkdirSync(dir, { mode: 0o700, recursive: true });
    enable(dir);
  } catch {
    // compiling without a cache is the fallback, never an error
  }
}
