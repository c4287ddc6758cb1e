import * as fs from "node:fs";
import * as path from "node:path";
import { isValidId } from "../../domain/ids.js";
import { lastAttemptDir } from "../../folder/chain.js";
import { LATEST_FILE, nameDir, type RunPaths } from "../../infra/paths.js";

// The newest turn of a name (specs/dispatch.md, "Following up"): the dispatch `<name>/latest` names — the
// newest one admitted under the name — followed to its chain's last attempt. What `--follow-up NAME`
// continues, judged once before the run's lock and again under it.

/** The folder of the name's newest turn, or null when the run has no dispatch of that name. */
export function newestTurnDir(run: RunPaths, name: string): string | null {
  const folder = nameDir(run, name);
  const named = readLatestId(folder);
  const id = named ?? newestId(folder);
  return id === null ? null : lastAttemptDir(path.join(folder, id));
}

function readLatestId(folder: string): string | null {
  try {
    const id = fs.readFileSync(path.join(folder, LATEST_FILE), "utf8").trim();
    return isValidId(id) && isRealDir(path.join(folder, id)) ? id : null;
  } catch {
    return null;
  }
}

/** Without `latest` (a folder from before it, or a torn write): the newest id by its name (ids sort by time). */
function newestId(folder: string): string | null {
  let entries: string[];
  try {
    entries = fs.readdirSync(folder);
  } catch {
    return null;
  }
  const ids = entries.filter((e) => e !== LATEST_FILE && isValidId(e) && isRealDir(path.join(folder, e)));
  return ids.sort().at(-1) ?? null;
}

/** A folder, not a symbolic link: a link planted in a run must not lead a follow-up outside it. */
function isRealDir(dir: string): boolean {
  return fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}
