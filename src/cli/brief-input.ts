import * as fs from "node:fs";
import * as path from "node:path";
import { backendNamed } from "../backends/backend-registry.js";
import { briefTooLong, MAX_BRIEF_BYTES } from "../dispatch/request/dispatch-request.js";
import { messageTooLong } from "../dispatch/steer/send.js";
import { CatherdError, ioFix, isCatherdError } from "../domain/errors.js";
import { MAX_MESSAGE_BYTES } from "../domain/steering/inbox.js";
import { readFdCapped, readStreamCapped } from "../infra/capped-read.js";
import { systemClock } from "../infra/clock.js";
import { waitUntil, wakeOnEvents } from "../infra/wait-until.js";
import { type ParsedInput, stringOption } from "./command-io.js";

/**
 * How long `dispatch` of a command that needs no brief (exec) gives a piped stdin to show it carries one:
 * a pipe that a shell fills (`echo … | catherd dispatch`) has its data or its end by then; one an
 * orchestrator merely left open never does, and must not hang the dispatcher.
 */
export const OPEN_STDIN_GRACE_MS = 100;

/**
 * A text read from a file or stdin, as a refusal names it: what it is, the flag that gives it as a file,
 * and its limit. Reading never goes further than a bounded way past `maxBytes`.
 */
interface TextKind {
  noun: string;
  flag: string;
  maxBytes: number;
  tooLong(what: string, size: number | null): CatherdError;
}

const BRIEF: TextKind = {
  noun: "brief",
  flag: "--brief-file",
  maxBytes: MAX_BRIEF_BYTES,
  tooLong: briefTooLong,
};
const MESSAGE: TextKind = {
  noun: "message",
  flag: "--file",
  maxBytes: MAX_MESSAGE_BYTES,
  tooLong: messageTooLong,
};

/**
 * The brief from --brief, --brief-file (a path, or - for stdin), or stdin when it is not a terminal.
 * Without `stdinIsOurs` (under MCP stdin carries the protocol) stdin is never read. For a backend that
 * needs no brief (exec), stdin is read when it is a file, or a pipe with something in it or closed within
 * OPEN_STDIN_GRACE_MS; a pipe left open and silent is not read, and `dispatch` says so on stderr at once —
 * a brief is never ignored silently.
 */
export async function readBrief(input: ParsedInput, stdinIsOurs: boolean): Promise<Buffer | null> {
  const text = stringOption(input, "brief");
  const file = stringOption(input, "brief-file");
  if (text !== undefined && file !== undefined) {
    throw new CatherdError("E_INPUT_INVALID", "--brief and --brief-file are both given", {
      fix: "give one of them",
    });
  }
  if (text !== undefined) return Buffer.from(text, "utf8");
  if (file === "-") {
    if (!stdinIsOurs) {
      throw new CatherdError("E_INPUT_INVALID", "--brief-file - reads stdin, which is not available here", {
        fix: "give the brief as text (brief) or the path of a file (briefFile)",
      });
    }
    return readStdin(BRIEF);
  }
  if (file !== undefined) return readTextFile(file, BRIEF);
  if (!stdinIsOurs || process.stdin.isTTY === true) return null;
  const backend = backendNamed(stringOption(input, "backend") ?? "");
  if (backend?.needsBrief !== false) return readStdin(BRIEF);
  return readOptionalStdin();
}

/**
 * A message given as a file (`send --file`), else on stdin when stdin is the command's and no terminal;
 * null when neither gives one. Read as a brief is (without blocking on a FIFO), no further than a
 * message's own limit, which a refusal names with `--file`.
 */
export async function readMessageText(
  file: string | undefined,
  stdinIsOurs: boolean,
): Promise<string | null> {
  if (file !== undefined && file !== "-") return readTextFile(file, MESSAGE).toString("utf8");
  if (!stdinIsOurs || process.stdin.isTTY === true) return null;
  return (await readStdin(MESSAGE)).toString("utf8");
}

/**
 * The bytes of a text file, read without blocking (a FIFO given as the file is refused, never waited on)
 * and no further than its kind's limit. A path that is no file — not there, a folder, a device — is the
 * user's mistake (E_INPUT_INVALID); a file the system refuses to read is E_IO_READ with the fix for its
 * errno.
 */
function readTextFile(file: string, kind: TextKind): Buffer {
  const given = `${kind.flag} ${file}`;
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    throw textFileRefused(given, file, error);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (stat.isDirectory()) throw notATextFile(given, "is a folder, not a file");
    if (!stat.isFile()) throw notATextFile(given, "is not a regular file (a FIFO, a device or a socket)");
    if (stat.size > kind.maxBytes) throw kind.tooLong(given, stat.size);
    const read = readFdCapped(fd, kind.maxBytes);
    if (read.kind === "over") throw kind.tooLong(given, null);
    return read.bytes;
  } catch (error) {
    throw isCatherdError(error) ? error : textFileRefused(given, file, error);
  } finally {
    fs.closeSync(fd);
  }
}

function notATextFile(given: string, why: string): CatherdError {
  return new CatherdError("E_INPUT_INVALID", `${given} ${why}`, {
    fix: "give the path of a text file",
  });
}

/** Why opening or reading a text file failed (`given`: "--brief-file x"), in the words of its errno. */
function textFileRefused(given: string, file: string, error: unknown): CatherdError {
  const errno = (error as NodeJS.ErrnoException).code;
  if (errno === "ENOENT") {
    const link = fs.lstatSync(file, { throwIfNoEntry: false });
    if (link?.isSymbolicLink() === true) {
      const target = path.resolve(path.dirname(file), fs.readlinkSync(file));
      return notATextFile(given, `is a symbolic link to ${target}, which does not exist`);
    }
    return notATextFile(given, "does not exist");
  }
  if (errno === "ENOTDIR") return notATextFile(given, "is not a path to a file: a part of it is a file");
  if (typeof errno !== "string") throw error;
  const message = error instanceof Error ? error.message : String(error);
  return new CatherdError("E_IO_READ", `cannot read ${given}: ${message}`, {
    fix: ioFix(errno, file, "read"),
    cause: error,
    file,
  });
}

/**
 * Stdin given as a folder (`< some-folder`) holds no text: reading it fails with EISDIR, which a stream
 * takes for an empty input, so it is refused by its kind before any read.
 */
function stdinIsAFolder(kind: TextKind): CatherdError {
  return new CatherdError("E_INPUT_INVALID", `stdin is a folder, not a file: it holds no ${kind.noun}`, {
    fix: `give a file on stdin (< ${kind.noun}.md), or the path of one with ${kind.flag}`,
  });
}

/** Stdin as a brief that may be there: read when it shows it is (see readBrief), else null. */
async function readOptionalStdin(): Promise<Buffer | null> {
  const stat = fstatOrNull(0);
  if (stat === null) return null;
  if (stat.isDirectory()) throw stdinIsAFolder(BRIEF);
  // /dev/null, a terminal: nothing given.
  if (stat.isCharacterDevice()) return null;
  if (stat.isFile()) return stat.size === 0 ? null : readStdin(BRIEF);
  if (!(await stdinShowsItself(OPEN_STDIN_GRACE_MS))) {
    process.stderr.write(
      `catherd: stdin was not read: it stayed open with nothing in it for ${OPEN_STDIN_GRACE_MS} ms (give the brief with --brief-file - to wait for it)\n`,
    );
    process.stdin.destroy();
    return null;
  }
  const piped = await readStdin(BRIEF);
  return piped.length === 0 ? null : piped;
}

/** Whether stdin has data, or its end, within `ms`. */
async function stdinShowsItself(ms: number): Promise<boolean> {
  let shown = false;
  const mark = () => {
    shown = true;
  };
  process.stdin.once("readable", mark);
  await waitUntil(() => (shown ? true : undefined), {
    clock: systemClock,
    deadline: systemClock.now() + ms,
    pollMs: ms,
    watch: wakeOnEvents(process.stdin, ["readable"]),
  });
  // On a loaded machine the process may wake past the deadline with the pipe's data or end already
  // there: timers run before I/O in node's loop, so let the I/O that was ready be delivered first.
  if (!shown) await new Promise((resolve) => setImmediate(resolve));
  process.stdin.off("readable", mark);
  return shown;
}

/**
 * Stdin to its end, as a text of its kind, kept no further than the kind's limit: a finite pipe over it is
 * drained and refused, an endless one (`yes |`, `< /dev/zero`) refused once it has run a bounded way past
 * the limit (its writer gets EPIPE: specs/dispatch.md §1). A folder on stdin is refused unread.
 */
async function readStdin(kind: TextKind): Promise<Buffer> {
  const stat = fstatOrNull(0);
  if (stat?.isDirectory() === true) throw stdinIsAFolder(kind);
  const what = `the ${kind.noun} on stdin`;
  // A file on stdin says its size: refused with it, unread.
  if (stat?.isFile() === true && stat.size > kind.maxBytes) throw kind.tooLong(what, stat.size);
  const read = await readStreamCapped(process.stdin, kind.maxBytes);
  if (read.kind === "over") throw kind.tooLong(what, null);
  return read.bytes;
}

function fstatOrNull(fd: number): fs.Stats | null {
  try {
    return fs.fstatSync(fd);
  } catch {
    return null;
  }
}
