import { mergeWindows, type QuotaWindow, type SeenWindow } from "../src/domain/spend/quota.js";
import { FILES } from "../src/folder/layout.js";

/** Writes one folder file (the loop's notice writer: a refused write is logged, never fatal). */
type Notice = (file: typeof FILES.quota, body: { windows: SeenWindow[] }) => void;

/**
 * Keeps quota.json: the windows the CLI reported (a line's `quota`), merged as quota.ts says and written
 * whenever a report comes, each window stamped with the wall time of the line that reported it. An
 * adopter starts from nothing and reads the stream's backlog first, which reports the same windows again.
 */
export function quotaKeeper(notice: Notice, wallOf: (mono: number) => number) {
  let windows: SeenWindow[] = [];
  return (quota: readonly QuotaWindow[], at: number): void => {
    const merged = mergeWindows(windows, quota, new Date(wallOf(at)).toISOString());
    if (merged === null) return;
    windows = merged;
    notice(FILES.quota, { windows });
  };
}
