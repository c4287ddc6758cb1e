import * as fs from "node:fs";

/** Tells the watch loop that a file it reads may have changed. */
export interface FolderWatch {
  close(): void;
}

/**
 * Calls `onChange(name)` when one of `names` in `dir` is created, written, renamed or removed (inotify on
 * Linux). Null where the folder cannot be watched; the loop then polls at pollMs as it always may. A
 * watch that fails later just stops waking the loop, which still wakes for its deadlines and its slow
 * safety poll.
 */
export function watchFolder(
  dir: string,
  names: readonly string[],
  onChange: (name: string) => void,
): FolderWatch | null {
  try {
    const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
      // Some platforms report no name: then anything may have changed.
      if (name === null || names.includes(name)) onChange(name ?? "");
    });
    watcher.on("error", () => {});
    return { close: () => watcher.close() };
  } catch {
    return null;
  }
}
