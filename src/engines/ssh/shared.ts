import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { CatherdError } from "../../domain/errors.js";
import { NOT_PLACED_FIX, runSsh, sshError } from "./command.js";
import { shellQuote } from "./quote.js";

// The shared-folder check before a dispatch is placed on a host (specs/placement.md, "SSH"): everything
// between catherd's processes goes through the dispatch folder, so the host must see catherd's home at the
// same path. A marker with a random token is written here and read there over ssh; the same token read
// back proves the same file, not merely a folder of the same name. The marker is removed either way.

/** The marker's name in the home: a dot file, removed once read. */
const MARKER_PREFIX = ".placement-check.";

/** A marker written into catherd's home here: its path and the token it holds. */
export interface Marker {
  path: string;
  token: string;
}

/** Runs `use` while a fresh marker exists in `home`; the marker is removed whatever `use` does. */
export async function withMarker<T>(home: string, use: (marker: Marker) => Promise<T>): Promise<T> {
  const token = randomBytes(16).toString("hex");
  const marker = path.join(path.resolve(home), `${MARKER_PREFIX}${token}`);
  fs.mkdirSync(path.dirname(marker), { recursive: true });
  fs.writeFileSync(marker, `${token}\n`, { mode: 0o600 });
  try {
    return await use({ path: marker, token });
  } finally {
    fs.rmSync(marker, { force: true });
  }
}

/** E_PLACEMENT_UNSHARED: `host` did not read `marker` (what it did instead, in `what`), with the fix. */
export function unsharedError(host: string, home: string, marker: string, what: string): CatherdError {
  return new CatherdError(
    "E_PLACEMENT_UNSHARED",
    `${host} does not see catherd's home at ${path.resolve(home)}: a marker written here, ${marker}, ${what}`,
    {
      fix: `put catherd's home (CATHERD_HOME) on storage ${host} mounts at the same path (NFS, a cluster file system), ${NOT_PLACED_FIX}`,
    },
  );
}

/**
 * Null when `host` reads, at the same path, a marker written into `home` here; else why not:
 * E_PLACEMENT_UNSHARED with the fix, or ssh's own failure (E_ENGINE_MISSING, _UNCONFIGURED, _TIMEOUT).
 */
export function unsharedProblem(host: string, home: string): Promise<CatherdError | null> {
  return withMarker(home, async (marker) => {
    const read = await runSsh(host, `cat -- ${shellQuote(marker.path)}`);
    if (read.ok && read.stdout.trim() === marker.token) return null;
    if (!read.ok && read.failure !== "refused") return sshError(read, host, `place a dispatch on ${host}`);
    const what = read.ok ? "read another file there" : `could not read it there (${read.words})`;
    return unsharedError(host, home, marker.path, what);
  });
}
