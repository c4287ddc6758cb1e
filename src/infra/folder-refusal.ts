import * as fs from "node:fs";
import * as path from "node:path";
import { CatherdError, ioFix } from "../domain/errors.js";
import { catherdHome } from "./paths.js";

// Why a folder could not be made, in words about the real cause. node's recursive mkdir answers ENOENT
// naming the deepest folder whatever stopped it — a read-only file system, a folder this user may not
// write, a symbolic link to nowhere — so its error says "no such file or directory" of a folder catherd
// was about to create. The nearest part of the path that exists is asked instead.

/**
 * The error to raise for `error`, thrown by making `dir` (and its parents): E_IO_WRITE naming the part of
 * the path that stopped it and why — a symbolic link that points nowhere, a file where a folder belongs, a
 * read-only file system, a folder this user may not write — with a fix; said of catherd's home when `dir`
 * is in it (the fix then names CATHERD_HOME). When the path shows no such cause (a full disk, a race),
 * `error` itself, for the caller's error story (asCatherdError) to word by its errno.
 */
export function folderRefusal(dir: string, error: unknown, home = catherdHome()): unknown {
  const blocker = nearestExisting(dir);
  if (blocker === null) return error;
  const inHome = isWithin(dir, home);
  const subject = blocker === home ? `catherd's home ${home}` : blocker;
  const elsewhere = inHome ? `, or point CATHERD_HOME at a folder this user can write` : "";
  const refuse = (why: string, fix: string, errno: string) =>
    new CatherdError("E_IO_WRITE", `cannot create ${dir}: ${subject} ${why} (${errno})`, {
      fix: `${fix}${elsewhere}`,
      cause: error,
      file: blocker,
    });
  const link = fs.lstatSync(blocker);
  let target: fs.Stats;
  try {
    target = fs.statSync(blocker);
  } catch (cause) {
    const errno = (cause as NodeJS.ErrnoException).code ?? "ENOENT";
    const to = link.isSymbolicLink()
      ? path.resolve(path.dirname(blocker), fs.readlinkSync(blocker))
      : blocker;
    return refuse(
      errno === "ELOOP"
        ? `is a symbolic link that leads back to itself`
        : `is a symbolic link to ${to}, which does not exist`,
      errno === "ELOOP" ? `replace the link ${blocker}` : `create the folder it points to (mkdir -p ${to})`,
      errno,
    );
  }
  if (!target.isDirectory()) {
    return refuse("is a file, not a folder", `move ${blocker} aside`, "ENOTDIR");
  }
  try {
    fs.accessSync(blocker, fs.constants.W_OK | fs.constants.X_OK);
  } catch (cause) {
    const errno = (cause as NodeJS.ErrnoException).code ?? "EACCES";
    if (errno === "EROFS") {
      return refuse(
        "is on a read-only file system",
        `remount it read-write (mount -o remount,rw on its mount point)`,
        errno,
      );
    }
    if (errno === "EACCES" || errno === "EPERM") {
      return refuse("is not writable by this user", ioFix(errno, blocker, "write"), errno);
    }
  }
  return error;
}

/**
 * The deepest part of `dir` that exists, `dir` itself included (a dangling symbolic link counts: it is
 * there), or null when not even the root can be looked at.
 */
function nearestExisting(dir: string): string | null {
  for (let at = path.resolve(dir); ; at = path.dirname(at)) {
    try {
      if (fs.lstatSync(at, { throwIfNoEntry: false }) !== undefined) return at;
    } catch {
      // ENOTDIR: a part above is a file; it is found further up.
    }
    if (at === path.dirname(at)) return null;
  }
}

function isWithin(dir: string, home: string): boolean {
  const relative = path.relative(home, path.resolve(dir));
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}
