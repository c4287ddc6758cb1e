import * as fs from "node:fs";
import { waitsUnpromoted } from "../domain/state/state.js";
import { FILES, fileIn } from "./layout.js";

/**
 * Whether the folder's dispatch waits in the queue, never promoted (domain/state/state.ts, `waitsUnpromoted`),
 * judged by stats alone. `queued` says whether it was admitted queued, when the caller knows it already
 * (a live marker's `queued`); else queued.json is looked for.
 */
export function waitsUnpromotedOnDisk(dir: string, queued?: boolean): boolean {
  const exists = (file: (typeof FILES)[keyof typeof FILES]) => fs.existsSync(fileIn(dir, file));
  // Not queued costs no more stats.
  if (!(queued ?? exists(FILES.queued))) return false;
  return waitsUnpromoted({ queued: true, promoted: exists(FILES.promoted), ended: exists(FILES.exit) });
}
