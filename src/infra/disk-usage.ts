import * as fs from "node:fs";
import * as path from "node:path";

// How many bytes a folder holds, and removing one while saying how many bytes went with it.

/**
 * The apparent size of everything under `target` (files and symlinks, each counted once however many
 * links it has), never following a symlink out of it. Entries that vanish or cannot be read while it walks
 * count as zero: a measure, not an audit. Zero when `target` does not exist.
 */
export function bytesUnder(target: string): number {
  const seen = new Set<string>();
  let total = 0;
  const visit = (entry: string) => {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(entry);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      let names: string[];
      try {
        names = fs.readdirSync(entry);
      } catch {
        return;
      }
      for (const name of names) visit(path.join(entry, name));
      return;
    }
    const inode = `${stat.dev}:${stat.ino}`;
    if (stat.nlink > 1) {
      if (seen.has(inode)) return;
      seen.add(inode);
    }
    total += stat.size;
  };
  visit(target);
  return total;
}

/** Removes `target` and everything under it; returns the bytes it held (zero when it was not there). */
export function removeMeasured(target: string): number {
  const bytes = bytesUnder(target);
  fs.rmSync(target, { recursive: true, force: true });
  return bytes;
}
