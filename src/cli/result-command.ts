import * as path from "node:path";
import { inspectDispatch, problemOf } from "../dispatch/inspect.js";
import type { EarlierAttempt } from "../dispatch/overview.js";
import { promoteRunOf } from "../dispatch/queue.js";
import { settleIfDead } from "../dispatch/settle.js";
import { formatDuration } from "../domain/duration.js";
import { CatherdError } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { attemptDirs, handOverPending, lastAttemptDir, readNext } from "../folder/chain.js";
import { FILES } from "../folder/layout.js";
import { markSeen } from "../folder/markers.js";
import { readFolderJson } from "../folder/read.js";
import { okValue } from "../infra/json-file.js";
import type { Command } from "./kit.js";
import { leftBehindLines } from "./left-behind.js";
import { whyLine } from "./render.js";
import { dispatchDirOf, refOf } from "./resolve.js";
import { spendLines, spendWords } from "./spend-text.js";

/** One attempt of a chain, as `result --json` lists them: how it ended (as `status` shows it), where, on what model. */
export interface AttemptSummary extends EarlierAttempt {
  dir: string;
  model: string | null;
}

/** `result --json`: record.json as written, and every attempt of its chain (one for a plain dispatch). */
export type ResultData = RecordFile & { attempts: AttemptSummary[] };

export const resultCommand: Command<ResultData> = {
  name: "result",
  usage: `usage: catherd result <name|id|dir> [--run <r>] [--json]

The record of a finished dispatch and its reply; for a chain of attempts (--fallback), the record of its
last attempt once the chain has ended. With --json, record.json as written (it holds the reply) and
\`attempts\`: every attempt of the chain with how it ended.`,
  options: {
    run: { type: "string", description: "the run to look in (default: $CATHERD_RUN, else default)" },
  },
  async handler(input) {
    const ref = refOf(input, "result");
    const asked = dispatchDirOf(input, ref);
    await promoteRunOf(asked);
    // A chain answers with its last attempt; one whose hand-over nobody did yet is handed over first.
    let dir = lastAttemptDir(asked);
    let view = await settleIfDead(inspectDispatch(dir));
    if (handOverPending(dir, view.record)) {
      await promoteRunOf(dir, { force: true });
      dir = lastAttemptDir(dir);
      view = await settleIfDead(inspectDispatch(dir));
    }
    const problem = problemOf(view, FILES.record);
    if (problem !== undefined) throw problem;
    const name = view.admit?.name ?? view.dispatchId;
    if (view.record === null || handOverPending(dir, view.record)) {
      const attempt = view.admit?.attempt ?? 1;
      const which =
        attempt > 1
          ? `its attempt ${attempt} (${view.admit?.backend ?? "?"}) is ${view.state}`
          : `it is ${view.state}`;
      throw new CatherdError(
        "E_NOT_RECORDED",
        view.record === null
          ? `${name} has no record yet (${which})`
          : `${name} has not ended: its chain goes on to ${view.record.next?.backend ?? "?"}`,
        { fix: `catherd wait ${name}` },
      );
    }
    markSeen(dir);
    const record = view.record;
    const attempts = attemptDirs(dir).map(attemptSummary);
    const text = [
      recordLine(record),
      ...(attempts.length > 1 ? [`attempts: ${attempts.map(attemptWords).join(" → ")}`] : []),
      ...chainStopLines(dir),
      ...spendLines(record, view.spec),
      ...errorLines(record),
      ...leftBehindLines(record, view.spec),
      "",
      record.reply ?? "(no reply)",
    ];
    return { data: { ...record, attempts }, text: `${text.join("\n")}\n` };
  },
};

/** How one attempt of a chain ended, from its folder: its admit.json and record.json, nothing more. */
function attemptSummary(dir: string): AttemptSummary {
  const admit = okValue(readFolderJson(dir, FILES.admit));
  const record = okValue(readFolderJson(dir, FILES.record));
  return {
    attempt: admit?.attempt ?? record?.attempt ?? 1,
    dispatchId: admit?.dispatchId ?? record?.dispatchId ?? path.basename(dir),
    dir,
    backend: record?.backend ?? admit?.backend ?? null,
    model: record?.model ?? admit?.model ?? null,
    status: record?.status ?? null,
    kind: record?.error?.kind ?? null,
  };
}

/** "codex quota", "claude-code ok". */
function attemptWords(a: AttemptSummary): string {
  return `${a.backend ?? "?"} ${a.status === "ok" ? "ok" : (a.kind ?? a.status ?? "?")}`;
}

/** Why a chain stopped before the rung its last record named (next.json): cancelled, or refused. */
function chainStopLines(dir: string): string[] {
  const next = readNext(dir);
  if (next === null || next.stopped === null) return [];
  return [`chain stopped: ${next.stopped}${next.message === null ? "" : ` — ${next.message}`}`];
}

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

/**
 * One line about a record: "fix-tests 20261129T081530Z-k3x9qa ok (exited) 42s 20.3k tokens $0.0137
 * (claude-code's figure)" — a cost catherd priced reads "~$0.0124 (estimate)".
 */
export function recordLine(r: RecordFile): string {
  const secs = r.secs === null ? "" : ` ${formatDuration(r.secs * 1000)}`;
  return `${r.name ?? "(by hand)"} ${r.dispatchId} ${r.status} (${r.reason})${secs}${spendWords(r)}`;
}
