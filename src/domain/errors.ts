import type { ErrorCode } from "./vocab.js";

/** The one user-facing error: a code from the closed set, a message naming the thing, and a fix to run. */
export class CatherdError extends Error {
  readonly code: ErrorCode;
  readonly fix: string | undefined;
  /** The file the error is about, when there is one: what callers match on, never the message. */
  readonly file: string | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { fix?: string; cause?: unknown; file?: string } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CatherdError";
    this.code = code;
    this.fix = options.fix;
    this.file = options.file;
  }

  /**
   * The `{error: …}` object of `--json`. E_INTERNAL adds `stack`: the stack of the throw it wraps, the
   * hint a bug report needs.
   */
  toJSON(): { code: ErrorCode; message: string; fix: string | null; stack?: string | null } {
    const json = { code: this.code, message: this.message, fix: this.fix ?? null };
    return this.code === "E_INTERNAL" ? { ...json, stack: stackOf(this.cause) } : json;
  }
}

/** What an internal error tells the user to do. */
export const INTERNAL_FIX =
  "this is a bug in catherd: please report it with the stack (in --json output, or printed with CATHERD_DEBUG=1)";

/**
 * Any throw as the one user-facing error (matched by its class and errno code, never by its text): a
 * CatherdError as it is; a file-system call the operating system refused (ENOSPC, EACCES, EROFS…) as
 * E_IO_WRITE or E_IO_READ naming the path, with the fix for that errno (ioFix); anything else — a throw
 * catherd did not anticipate, a bug — as E_INTERNAL carrying it (its message, and its stack through
 * toJSON).
 */
export function asCatherdError(error: unknown): CatherdError {
  if (isCatherdError(error)) return error;
  const io = ioCodeOf(error);
  if (io !== null) {
    const { code, path: file } = error as { code: string; path?: unknown };
    const where = typeof file === "string" ? file : "the file";
    return new CatherdError(io, (error as Error).message, {
      fix: ioFix(code, where, io === "E_IO_WRITE" ? "write" : "read"),
      cause: error,
      ...(typeof file === "string" ? { file } : {}),
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new CatherdError("E_INTERNAL", message === "" ? "an unexpected error" : message, {
    fix: INTERNAL_FIX,
    cause: error,
  });
}

/** File-system calls whose refusal means catherd could not write (opening a file included). */
const WRITE_CALLS = new Set([
  "open",
  "write",
  "mkdir",
  "mkdtemp",
  "rename",
  "link",
  "symlink",
  "unlink",
  "rmdir",
  "rm",
  "chmod",
  "fchmod",
  "utime",
  "futime",
  "fsync",
  "fdatasync",
  "ftruncate",
  "copyfile",
]);
/** File-system calls whose refusal means catherd could not read. */
const READ_CALLS = new Set([
  "read",
  "readdir",
  "scandir",
  "stat",
  "lstat",
  "fstat",
  "readlink",
  "realpath",
  "access",
]);

/**
 * What to do about the operating system's refusal (`errno`) to read or write `where`: the cause in a few
 * words and what to run, one line for each cause — a full disk is not a permission, nor a read-only file
 * system, nor a path that is not there.
 */
export function ioFix(errno: string, where: string, act: "read" | "write"): string {
  switch (errno) {
    case "ENOSPC":
    case "EDQUOT":
      return `the file system that holds ${where} is full (or its quota spent): free space there (df -h), then run the command again`;
    case "EROFS":
      return `${where} is on a read-only file system: remount it read-write, or, if it is in catherd's home, point CATHERD_HOME at a writable folder`;
    case "EACCES":
    case "EPERM":
      return act === "write"
        ? `this user may not write ${where}: check its permissions and its folder's (ls -ld ${where}), and that it is not immutable (lsattr -d ${where})`
        : `this user may not read ${where}: check its permissions (ls -l ${where})`;
    case "ENOENT":
      return `${where} does not exist, or a folder on its path does not (a symbolic link may point nowhere): check the path`;
    case "ENOTDIR":
      return `a part of the path ${where} is a file, not a folder: check the path`;
    case "EISDIR":
      return `${where} is a folder where a file was expected: give the path of a file`;
    case "ELOOP":
      return `a symbolic link on the path ${where} leads back to itself: check the path`;
    case "ENAMETOOLONG":
      return `the path ${where} is too long: give a shorter one`;
    case "EIO":
      return `the device that holds ${where} reported an I/O error: check the disk (dmesg), then run the command again`;
    case "EMFILE":
    case "ENFILE":
      return "too many files are open (ulimit -n): close some programs, then run the command again";
    default:
      return `check ${where} (ls -ld ${where}), then run the command again`;
  }
}

/** E_IO_WRITE / E_IO_READ for an operating system's refusal of a file-system call (errno code + syscall). */
function ioCodeOf(error: unknown): "E_IO_WRITE" | "E_IO_READ" | null {
  if (!(error instanceof Error)) return null;
  const { code, syscall } = error as { code?: unknown; syscall?: unknown };
  if (typeof code !== "string" || !/^E[A-Z0-9]+$/.test(code) || typeof syscall !== "string") return null;
  if (WRITE_CALLS.has(syscall)) return "E_IO_WRITE";
  if (READ_CALLS.has(syscall)) return "E_IO_READ";
  return null;
}

/** The stack of a throw, or null when it has none (a thrown string). */
export function stackOf(error: unknown): string | null {
  return error instanceof Error && typeof error.stack === "string" ? error.stack : null;
}

/** Exit status when `wait --timeout` passes first (as coreutils `timeout`): not an error, no code maps to it. */
export const WAIT_TIMEOUT_EXIT = 124;

/**
 * Exit status of `catherd lock` when no slot came free within its `--wait` (E_LOCK_BUSY): sysexits.h's
 * EX_TEMPFAIL, "try again later" — what a busy lock is, and outside the codes catherd uses otherwise.
 */
export const LOCK_BUSY_EXIT = 75;

/**
 * The process exit status for an error code (specs/cli.md, "Exit codes"): 2 usage, 3 not ready (a CLI,
 * or the placement's engine), 75 no heavy slot in time, 130 interrupted, else 1.
 */
export function exitCodeFor(code: ErrorCode): number {
  switch (code) {
    case "E_INPUT_INVALID":
      return 2;
    case "E_BACKEND_MISSING":
    case "E_BACKEND_BROKEN":
    case "E_BACKEND_TOO_OLD":
    case "E_ENGINE_MISSING":
    case "E_ENGINE_UNCONFIGURED":
    case "E_ENGINE_UNREACHABLE":
    case "E_PLACEMENT_UNSHARED":
    case "E_SANDBOX_UNAVAILABLE":
      return 3;
    case "E_LOCK_BUSY":
      return LOCK_BUSY_EXIT;
    case "E_INTERRUPTED":
      return 130;
    default:
      return 1;
  }
}

/** Narrowing helper for catch clauses. */
export function isCatherdError(value: unknown): value is CatherdError {
  return value instanceof CatherdError;
}
