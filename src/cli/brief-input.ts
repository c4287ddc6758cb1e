import * as fs from "node:fs";
import { backendNamed } from "../backends/registry.js";
import { MAX_BRIEF_BYTES } from "../dispatch/request/request.js";
import { CatherdError } from "../domain/errors.js";
import { systemClock } from "../infra/clock.js";
import { waitUntil, wakeOnEvents } from "../infra/wait-until.js";
import { type ParsedInput, stringOption } from "./kit.js";

/**
 * How long `dispatch` of a command that needs no brief (exec) gives a piped stdin to show it carries one:
 * a pipe that a shell fills (`echo … | catherd dispatch`) has its data or its end by then; one an
 * orchestrator merely left open never does, and must not hang the dispatcher.
 */
export const OPEN_STDIN_GRACE_MS = 100;

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
    return readStdin();
  }
  if (file !== undefined) return readBriefFile(file);
  if (!stdinIsOurs || process.stdin.isTTY === true) return null;
  const backend = backendNamed(stringOption(input, "backend") ?? "");
  if (backend?.needsBrief !== false) return readStdin();
  return readOptionalStdin();
}

function readBriefFile(file: string): Buffer {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (stat === undefined || !stat.isFile()) {
    throw new CatherdError("E_INPUT_INVALID", `--brief-file ${file} is not a readable file`, {
      fix: "give the path of a text file",
    });
  }
  if (stat.size > MAX_BRIEF_BYTES) return Buffer.alloc(MAX_BRIEF_BYTES + 1);
  return fs.readFileSync(file);
}

/** Stdin as a brief that may be there: read when it shows it is (see readBrief), else null. */
async function readOptionalStdin(): Promise<Buffer | null> {
  let stat: fs.Stats;
  try {
    stat = fs.fstatSync(0);
  } catch {
    return null;
  }
  // /dev/null, a terminal: nothing given.
  if (stat.isCharacterDevice()) return null;
  if (stat.isFile()) return stat.size === 0 ? null : readStdin();
  if (!(await stdinShowsItself(OPEN_STDIN_GRACE_MS))) {
    process.stderr.write(
      `catherd: stdin was not read: it stayed open with nothing in it for ${OPEN_STDIN_GRACE_MS} ms (give the brief with --brief-file - to wait for it)\n`,
    );
    process.stdin.destroy();
    return null;
  }
  const piped = await readStdin();
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

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size <= MAX_BRIEF_BYTES) chunks.push(buffer);
  }
  // Over the limit: drain the rest and let validation refuse it (never a brief cut short silently).
  if (size > MAX_BRIEF_BYTES) return Buffer.alloc(MAX_BRIEF_BYTES + 1);
  return Buffer.concat(chunks);
}
