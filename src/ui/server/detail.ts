import * as fs from "node:fs";
import * as path from "node:path";
import { redactEnv } from "../../domain/text/redact.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { readSteering } from "../../folder/steering-view.js";
import type { Clock } from "../../infra/clock.js";
import { okValue } from "../../infra/json-file.js";
import { tailLines } from "../../infra/tail.js";
import type { AttemptWire, DispatchWire } from "../wire.js";
import { backendOfView, chainDirsOf } from "./dispatch-reads.js";
import { attemptWire, type Entry } from "./row-wire.js";
import { cutLine, StreamDigest } from "./stream-digest.js";

// A dispatch's page: everything `show` says and more, each file read within a bound so that no file an
// agent wrote can make the answer huge: the brief, the event stream (StreamDigest), the reply, the patch,
// the stderr tail, record.json and exit.json, spec.json with --env values redacted as `show` redacts them,
// and how its notification went.

const MAX_BRIEF_BYTES = 256 * 1024;
const MAX_REPLY_BYTES = 1024 * 1024;
const MAX_PATCH_BYTES = 2 * 1024 * 1024;
const STDERR_LINES = 50;
/** Digests kept for dispatches looked at lately (each holds at most a thousand lines). */
const DIGESTS_KEPT = 24;

export class Details {
  private readonly digests = new Map<string, StreamDigest>();

  constructor(private readonly clock: Clock) {}

  /** The page of `entry`, its stream read as far as it goes now. */
  of(run: string, entry: Entry, attempts: AttemptWire[]): DispatchWire {
    const { dir, view } = entry;
    const digest = this.digest(entry);
    digest.update(view.record !== null);
    const notifyLog = tailLines(fileIn(dir, FILES.notifyLog), 20).map((l) => cutLine(l, 400));
    const stall = okValue(readFolderJson(dir, FILES.stall));
    const patchBytes = view.record?.patch?.bytes ?? sizeOf(fileIn(dir, FILES.patch));
    return {
      run,
      row: entry.wire,
      dir,
      brief: readCapped(fileIn(dir, FILES.brief), MAX_BRIEF_BYTES),
      events: digest.lines.map(({ end: _end, ...line }) => line),
      eventsOmitted: digest.linesOmitted,
      toolCalls: digest.toolCalls(),
      toolCallsOmitted: digest.toolsOmitted,
      stall: stall === null ? null : { at: stall.at, quietMs: stall.quietMs },
      reply: view.record?.reply ?? readCapped(fileIn(dir, FILES.reply), MAX_REPLY_BYTES),
      patch: readCapped(fileIn(dir, FILES.patch), MAX_PATCH_BYTES),
      patchBytes,
      stderr: tailLines(fileIn(dir, FILES.stderr), STDERR_LINES).map((l) => cutLine(l)),
      usageOverTime: [...digest.usage],
      record: view.record,
      exit: view.exit,
      spec: view.spec === null ? null : { ...view.spec, env: redactEnv(view.spec.env) },
      notify: { claimed: fs.existsSync(fileIn(dir, FILES.notify)), log: notifyLog },
      attempts,
      steering: view.spec?.steer === undefined ? null : readSteering(dir, view.state),
      now: this.clock.wallNow().getTime(),
    };
  }

  private digest(entry: Entry): StreamDigest {
    let digest = this.digests.get(entry.dir);
    if (digest === undefined) {
      digest = new StreamDigest(entry.dir, backendOfView(entry.view));
      if (this.digests.size >= DIGESTS_KEPT) this.digests.delete(this.digests.keys().next().value as string);
    } else {
      this.digests.delete(entry.dir);
    }
    this.digests.set(entry.dir, digest);
    return digest;
  }
}

/** The attempts of the chain `entry` belongs to, from the run's entries. */
export function attemptsOf(entry: Entry, byId: (id: string) => Entry | undefined): AttemptWire[] {
  return chainDirsOf(entry.dir).flatMap((dir) => {
    const other = byId(path.basename(dir));
    if (other === undefined) return [];
    return [
      attemptWire({
        dispatchId: other.dispatchId,
        attempt: other.row.attempt,
        backend: other.row.backend,
        status: other.row.status,
        kind: other.row.error?.kind ?? null,
      }),
    ];
  });
}

/** A text file's first `max` bytes (with a note when cut); null when it is missing or not a file. */
function readCapped(file: string, max: number): string | null {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return null;
    const buffer = Buffer.alloc(Math.min(stat.size, max));
    fs.readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.toString("utf8");
    return stat.size > max ? `${text}\n… (${stat.size - max} more bytes, not shown)` : text;
  } finally {
    fs.closeSync(fd);
  }
}

function sizeOf(file: string): number | null {
  return fs.statSync(file, { throwIfNoEntry: false })?.size ?? null;
}
