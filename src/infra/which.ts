import * as fs from "node:fs";
import * as path from "node:path";

/**
 * The absolute path of an executable: a path with a slash resolved against the current folder, a bare
 * name looked up on PATH. A relative PATH entry is resolved against the current folder too (the path
 * goes into spec.json, whose `cmd` must not depend on the supervisor's folder); an empty entry, which
 * shells take for the current folder, is skipped.
 */
export function resolveExecutable(command: string, searchPath: string): string | null {
  if (command === "" || /[\0\n]/.test(command)) return null;
  return candidatesFor(command, searchPath).find(isExecutable) ?? null;
}

/** Where `command` may be: itself resolved when it holds a slash, else each non-empty PATH entry's. */
function candidatesFor(command: string, searchPath: string): string[] {
  if (command.includes("/")) return [path.resolve(command)];
  return searchPath
    .split(path.delimiter)
    .filter((dir) => dir !== "")
    .map((dir) => path.resolve(dir, command));
}

function isExecutable(file: string): boolean {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Why resolveExecutable found nothing, in words that point at the fix: a path that does not exist, that
 * is a folder, or that exists without execute permission; a bare name on no PATH entry, or found on one
 * only without execute permission.
 */
export function notExecutableBecause(command: string, searchPath: string): string {
  if (command === "") return "no command was given";
  if (/[\0\n]/.test(command)) return "a command cannot hold a NUL or a newline";
  for (const file of candidatesFor(command, searchPath)) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch {
      continue;
    }
    if (stat.isDirectory()) return `${file} is a folder, not a program`;
    if (stat.isFile()) return `${file} exists but is not executable (chmod +x ${file})`;
  }
  return command.includes("/") ? `${path.resolve(command)} does not exist` : `${command} is not on PATH`;
}
