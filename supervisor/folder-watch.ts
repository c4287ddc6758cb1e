import * as fs from "node:fs";

/** Tells the watch loop that a file it reads may have changed. */
export interface FolderWatch {
  /** The watch failed after it started (the folder went away, say): it reports nothing any more. */
  readonly broken: boolean;
  close(): void;
}

/**
 * Calls `onChange(name)` when one of `names` in `dir` (a list, or a test of the name) is created, written,
 * renamed or removed (inotify on Linux). Null where the folder cannot be watched (no inotify, or its
 * per-user limit reached); a watch that fails later is `broken`, with one last call. Either way the loop
 * then reads every pollMs.
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
      onChange("");
    });
    return watch;
  } catch {
    return null;
  }
}
