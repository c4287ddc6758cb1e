import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { makeDir, writeJsonAtomic } from "./atomic.js";
import { okValue, readJsonFile } from "./json-file.js";

// The versions of the agent CLIs that answered, cached under CATHERD_HOME so that only the first dispatch
// after an install pays for `--version`. An entry is keyed by what changes when the CLI is replaced: its
// real path, size and mtime, and — for a CLI installed from npm, whose files all carry npm's fixed mtime
// and whose launcher may not change between versions — the version in its package.json.

const entrySchema = z.object({ version: z.string().nullable(), words: z.string(), checkedAt: z.string() });
const cacheSchema = z.object({ schema: z.literal(1), entries: z.record(z.string(), entrySchema) });
export type ReadinessEntry = z.infer<typeof entrySchema>;

/** Entries kept: the newest of them (a machine has a handful of CLIs, each upgraded now and then). */
const MAX_ENTRIES = 64;

export function readinessCacheFile(home: string): string {
  return path.join(home, "cache", "cli-versions.json");
}

/** The key of an executable as it is on disk now, or null when it cannot be read. */
export function executableKey(bin: string): string | null {
  try {
    const real = fs.realpathSync(bin);
    const stat = fs.statSync(real);
    return [real, stat.size, Math.trunc(stat.mtimeMs), packageVersionOf(real) ?? ""].join("\u0000");
  } catch {
    return null;
  }
}

/** The version of the npm package a file belongs to (the nearest package.json under node_modules). */
function packageVersionOf(file: string): string | null {
  if (!file.includes(`${path.sep}node_modules${path.sep}`)) return null;
  for (let dir = path.dirname(file); path.basename(dir) !== "node_modules"; dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json");
    if (fs.existsSync(manifest)) {
      try {
        const version = (JSON.parse(fs.readFileSync(manifest, "utf8")) as { version?: unknown }).version;
        return typeof version === "string" ? version : null;
      } catch {
        return null;
      }
    }
    if (path.dirname(dir) === dir) return null;
  }
  return null;
}

function readAll(home: string): Record<string, ReadinessEntry> {
  return okValue(readJsonFile(readinessCacheFile(home), cacheSchema))?.entries ?? {};
}

/** The cached answer for an executable key, or null (a torn or foreign cache file is no cache). */
export function cachedReadiness(home: string, key: string): ReadinessEntry | null {
  return readAll(home)[key] ?? null;
}

/** Remembers an answer; a cache that cannot be written only costs the next dispatch a probe. */
export function rememberReadiness(home: string, key: string, entry: ReadinessEntry): void {
  try {
    const entries = { ...readAll(home), [key]: entry };
    const newest = Object.entries(entries)
      .sort(([, a], [, b]) => b.checkedAt.localeCompare(a.checkedAt))
      .slice(0, MAX_ENTRIES);
    makeDir(path.dirname(readinessCacheFile(home)));
    writeJsonAtomic(readinessCacheFile(home), { schema: 1, entries: Object.fromEntries(newest) });
  } catch {
    // advisory
  }
}
