import * as fs from "node:fs";
import * as path from "node:path";
import { CatherdError } from "../../domain/errors.js";
import { isValidId } from "../../domain/ids.js";
import { isDispatchFolder } from "../../folder/layout.js";
import { raceNamed } from "../../folder/race.js";
import { LATEST_FILE, nameDir, type RunPaths, runsDir } from "../../infra/paths.js";

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

/**
 * A folder's entries: none when it does not exist (nothing was dispatched there yet); E_IO_READ naming
 * it when it exists and cannot be read — an unreadable run is never reported as an empty one.
 */
function readdir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw unreadable(dir, error);
  }
}

function unreadable(dir: string, error: unknown): CatherdError {
  const message = error instanceof Error ? error.message : String(error);
  return new CatherdError("E_IO_READ", `cannot read ${dir}: ${message}`, {
    fix: `inspect it with: ls -ld ${dir} (catherd needs to read and list it)`,
    cause: error,
    file: dir,
  });
}

/** The runs of a home, by name; none when the home has none yet. */
export function runNames(home: string): string[] {
  return readdir(runsDir(home))
    .filter((name) => isValidId(name))
    .sort();
}

/**
 * The run a command was asked to read. A run named by `--run` or `$CATHERD_RUN` that the home does not
 * have is E_RUN_NOT_FOUND (listing those it has); the default run of a home that has none yet is an
 * empty run.
 */
export function existingRun(run: RunPaths, named: boolean): RunPaths {
  if (!named || fs.existsSync(run.dir)) return run;
  const runs = runNames(run.home);
  throw new CatherdError("E_RUN_NOT_FOUND", `there is no run ${run.run} in ${run.home}`, {
    fix:
      runs.length === 0
        ? "nothing has been dispatched in this home yet (catherd dispatch --run <name> makes a run)"
        : `give one of its runs: ${runs.join(", ")}`,
  });
}

function notFound(ref: string, run: RunPaths): CatherdError {
  const race = raceNamed(run, ref);
  if (race !== null) {
    return new CatherdError("E_DISPATCH_NOT_FOUND", `no dispatch ${ref} in run ${run.run}: ${race}`, {
      fix: `name one attempt (catherd show ${ref}.1); catherd result ${ref} and catherd wait ${ref} take the whole race`,
    });
  }
  return new CatherdError(
    "E_DISPATCH_NOT_FOUND",
    `no dispatch ${JSON.stringify(ref.slice(0, 100))} in run ${run.run}`,
    {
      fix: `catherd status --run ${run.run} --all`,
    },
  );
}
