import * as fs from "node:fs";
import * as module from "node:module";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { COMPILE_CACHE_DIR } from "../../src/infra/compile-cache.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/folders.js";

// The compile cache through the real program: on a runtime that has one (Node >= 22.1) the first command
// fills <home>/.compile-cache, private to the user; on Node 20, or when turned off, nothing is written.
// CI runs this file on Node 20 and on Node 24, so both paths are taken.

const hasCompileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === "function";

/** The environment of a user's shell: no coverage collection (which turns the cache off). */
function userEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // Empty, not deleted: node hands its own NODE_V8_COVERAGE to a child whose env leaves the name out.
  const env: NodeJS.ProcessEnv = { ...process.env, CATHERD_HOME: home, NODE_V8_COVERAGE: "", ...extra };
  delete env.NODE_COMPILE_CACHE;
  return env;
}

function cachedFiles(home: string): string[] {
  const dir = path.join(home, COMPILE_CACHE_DIR);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

describe("the compile cache", () => {
  it(
    hasCompileCache
      ? "is filled in the catherd home by the first command, 0700, and accepted by the next"
      : "is not written on a runtime without one",
    async () => {
      const home = tempDir();
      const first = await runCli(["status", "--json"], { env: userEnv(home) });
      expect(first.code, first.stderr).toBe(0);
      if (!hasCompileCache) {
        expect(fs.existsSync(path.join(home, COMPILE_CACHE_DIR))).toBe(false);
        return;
      }
      expect(fs.statSync(path.join(home, COMPILE_CACHE_DIR)).mode & 0o777).toBe(0o700);
      const files = cachedFiles(home);
      expect(files.length).toBeGreaterThan(0);
      // Node's own debug log says which cached code it accepted.
      const second = await runCli(["status", "--json"], {
        env: userEnv(home, { NODE_DEBUG_NATIVE: "COMPILE_CACHE" }),
      });
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toBe(first.stdout);
      expect(second.stderr).toMatch(/code cache for ESM \S+status-command\S+ was accepted/);
      expect(cachedFiles(home).sort()).toEqual([...files].sort());
    },
  );

  it("is not written with CATHERD_COMPILE_CACHE=0, nor into a home that does not exist", async () => {
    const home = tempDir();
    const off = await runCli(["status", "--json"], { env: userEnv(home, { CATHERD_COMPILE_CACHE: "0" }) });
    expect(off.code, off.stderr).toBe(0);
    expect(fs.existsSync(path.join(home, COMPILE_CACHE_DIR))).toBe(false);
    const missing = path.join(home, "not-yet");
    const none = await runCli(["status", "--json"], { env: userEnv(missing) });
    expect(none.code, none.stderr).toBe(0);
    expect(fs.existsSync(missing)).toBe(false);
  });
});
