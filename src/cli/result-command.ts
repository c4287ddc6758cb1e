import { inspectDispatch, problemOf } from "../dispatch/inspect.js";
import { promoteRunOf } from "../dispatch/queue.js";
import { settleIfDead } from "../dispatch/settle.js";
import { formatDuration } from "../domain/duration.js";
import { CatherdError } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { FILES } from "../folder/layout.js";
import { markSeen } from "../folder/markers.js";
import type { Command } from "./kit.js";
import { leftBehindLines } from "./left-behind.js";
import { count, whyLine } from "./render.js";
import { dispatchDirOf, refOf } from "./resolve.js";

export const resultCommand: Command<RecordFile> = {
  name: "result",
  usage: `usage: catherd result <name|id|dir> [--run <r>] [--json]

The record of a finished dispatch and its reply. With --json, record.json as written (it holds the reply).`,
  options: {
    run: { type: "string", description: "the run to look in (default: $CATHERD_RUN, else default)" },
  },
  async handler(input) {
    const ref = refOf(input, "result");
    const dir = dispatchDirOf(input, ref);
    await promoteRunOf(dir);
    let view = inspectDispatch(dir);
    view = await settleIfDead(view);
    const problem = problemOf(view, FILES.record);
    if (problem !== undefined) throw problem;
    if (view.record === null) {
      throw new CatherdError(
        "E_NOT_RECORDED",
        `${view.admit?.name ?? view.dispatchId} has no record yet (it is ${view.state})`,
        {
          fix: `catherd wait ${view.admit?.name ?? view.dispatchId}`,
        },
      );
    }
    markSeen(dir);
    const record = view.record;
    const text = [
      recordLine(record),
      ...errorLines(record),
      ...leftBehindLines(record, view.spec),
      "",
      record.reply ?? "(no reply)",
    ];
    return { data: record, text: `${text.join("\n")}\n` };
  },
};

/**
 * Why a record is not ok, for people: "error: rate-limit, retry after 14:05 — ‹message›" (the retry time
 * also in full), then the tail of stderr.log.
 */
export function errorLines(r: RecordFile, options: { tail?: boolean } = {}): string[] {
  if (r.error === null || r.status === "ok") return [];
  const lines = [`error: ${whyLine(r.error)}`];
  if (r.error.retryAfter != null) lines.push(`retry after: ${r.error.retryAfter}`);
  const tail = r.error.tail ?? [];
  if (options.tail !== false && tail.length > 0)
    lines.push("stderr (last lines):", ...tail.map((l) => `  ${l}`));
  return lines;
}

/** One line about a record: "fix-tests 20261129T081530Z-k3x9qa ok (exited) 42s 20.3k tokens". */
export function recordLine(r: RecordFile): string {
  const secs = r.secs === null ? "" : ` ${formatDuration(r.secs * 1000)}`;
  const tokens =
    r.tokens.input + r.tokens.output > 0 ? ` ${count(r.tokens.input + r.tokens.output)} tokens` : "";
  const cost = r.costUsd === null ? "" : ` $${r.costUsd.toFixed(4)}`;
  return `${r.name ?? "(by hand)"} ${r.dispatchId} ${r.status} (${r.reason})${secs}${tokens}${cost}`;
}
