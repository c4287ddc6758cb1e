import * as fs from "node:fs";

// The one wrapper of fs.watch: a folder watched without keeping the process alive (persistent: false),
// a folder that cannot be watched (missing, no inotify, its per-user limit reached) as null, a watch that
// fails later as `broken` with one last call, and `close` to stop it. Every caller keeps a poll besides:
// a watch only makes a change seen sooner.

/** A watch of one folder. */
export interface FolderWatch {
  /** The watch failed after it started (the folder went away, say): it is closed and reports nothing more. */
  readonly broken: boolean;
  close(): void;
}

/**
 * Calls `onChange(name)` when one of `names` in `dir` (a list, or a test of the name) is created, written,
 * renamed or removed (inotify on Linux); `""` when the platform did not name the entry, and once when the
 * watch breaks. Null where the folder cannot be watched.
 */
export function watchFolder(
  dir: string,
  names: readonly string[] | ((name: string) => boolean),
  onChange: (name: string) => void,
): FolderWatch | null {
  const wanted = typeof names === "function" ? names : (name: string) => names.includes(name);
  try {
    const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
      // Some platforms report no name: then anything may have changed.
      if (name === null || wanted(name)) onChange(name ?? "");
    });
    const watch = { broken: false, close: () => watcher.close() };
    watcher.on("error", () => {
      watch.broken = true;
      watcher.close();
      onChange("");
    });
    return watch;
  } catch {
    return null;
  }
}
