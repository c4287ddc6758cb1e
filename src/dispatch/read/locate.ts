import * as fs from "node:fs";
import * as path from "node:path";
import { CatherdError } from "../../domain/errors.js";
import { isValidId } from "../../domain/ids.js";
import { isDispatchFolder } from "../../folder/layout.js";
import { LATEST_FILE, nameDir, type RunPaths } from "../../infra/paths.js";

// Finding dispatch folders. Names and ids are validated before they become paths, so nothing a user
// types can resolve outside its run; a folder path given explicitly is taken as is.

/** Every dispatch folder of a run, newest first (ids sort by creation time). */
export function listDispatchDirs(run: RunPaths): string[] {
  const dirs: { id: string; dir: string }[] = [];
  for (const name of readdir(run.dispatches)) {
    if (!isValidId(name) || !isRealDir(path.join(run.dispatches, name))) continue;
    for (const id of readdir(path.join(run.dispatches, name))) {
      if (id === LATEST_FILE || !isValidId(id)) continue;
      const dir = path.join(run.dispatches, name, id);
      if (isRealDir(dir)) dirs.push({ id, dir });
    }
  }
  return dirs.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((d) => d.dir);
}

/** Resolves `<name|id|dir>` within a run: a folder path, else the newest dispatch of a name, else an id. */
export function locateDispatch(run: RunPaths, ref: string): string {
  if (ref.includes("/") || ref === "." || ref === "..") {
    const dir = path.resolve(ref);
    if (isDispatchFolder(dir)) return dir;
    throw notFound(ref, run);
  }
  if (!isValidId(ref)) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `${JSON.stringify(ref.length > 80 ? `${ref.slice(0, 80)}…` : ref)} is not a valid name or dispatch id`,
      {
        fix: `give a name or id of 1-64 characters of A-Z a-z 0-9 . _ - (catherd status --run ${run.run} --all)`,
      },
    );
  }
  const byName = nameDir(run, ref);
  const latest = isRealDir(byName) ? readLatest(byName) : null;
  if (latest !== null) return path.join(byName, latest);
  for (const name of readdir(run.dispatches)) {
    if (!isValidId(name) || !isRealDir(path.join(run.dispatches, name))) continue;
    const dir = path.join(run.dispatches, name, ref);
    if (isRealDir(dir)) return dir;
  }
  throw notFound(ref, run);
}

function readLatest(dir: string): string | null {
  try {
    const id = fs.readFileSync(path.join(dir, LATEST_FILE), "utf8").trim();
    if (isValidId(id) && isRealDir(path.join(dir, id))) return id;
  } catch {
    // no latest: fall back to the newest folder of the name
  }
  const ids = readdir(dir).filter(
    (id) => id !== LATEST_FILE && isValidId(id) && isRealDir(path.join(dir, id)),
  );
  return ids.sort().at(-1) ?? null;
}

/** A folder, and not a symlink: a link planted in a run must not lead readers (and their writes) outside. */
function isRealDir(dir: string): boolean {
  return fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}

function readdir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function notFound(ref: string, run: RunPaths): CatherdError {
  return new CatherdError(
    "E_DISPATCH_NOT_FOUND",
    `no dispatch ${JSON.stringify(ref.slice(0, 100))} in run ${run.run}`,
    {
      fix: `catherd status --run ${run.run} --all`,
    },
  );
}
