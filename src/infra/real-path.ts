import * as fs from "node:fs";
import * as path from "node:path";

// A path as the file system resolves it, for comparing paths that name the same place through different
// routes (a symbolic link, `..` after a link): admission's `--owns` overlap (specs/dispatch.md §2, step 4).

/** How many symbolic links one resolution follows before it gives up, as Linux's ELOOP does (40). */
const MAX_LINKS = 40;

/**
 * The absolute path `p` names once every symbolic link along it is followed: realpath where it exists;
 * for a path that does not exist yet, the realpath of its deepest existing ancestor with the rest appended
 * (a dangling link is followed to where it points, so that what is created through it is judged where it
 * will land). A trailing `/` is kept: it means a folder to the caller. A loop of links (or more than
 * MAX_LINKS) stops resolving there and keeps the rest as written: such a path cannot be created anyway.
 */
export function resolvedPath(p: string): string {
  const folder = p.length > 1 && p.endsWith("/");
  const resolved = resolve(path.resolve(p), { links: 0 });
  return folder && resolved !== "/" ? `${resolved}/` : resolved;
}

function resolve(absolute: string, budget: { links: number }): string {
  try {
    return fs.realpathSync.native(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") return absolute;
  }
  const parent = path.dirname(absolute);
  if (parent === absolute) return absolute;
  const realParent = resolve(parent, budget);
  const here = path.join(realParent, path.basename(absolute));
  const target = linkTarget(here);
  if (target === null || budget.links >= MAX_LINKS) return here;
  budget.links += 1;
  return resolve(path.resolve(realParent, target), budget);
}

/** What the symbolic link at `p` points to, or null when `p` is not one (or is not there). */
function linkTarget(p: string): string | null {
  try {
    return fs.readlinkSync(p);
  } catch {
    return null;
  }
}
