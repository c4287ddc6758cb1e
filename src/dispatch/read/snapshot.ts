import type { DispatchState } from "../../domain/vocab.js";
import type { Clock } from "../../infra/clock.js";
import type { RunPaths } from "../../infra/paths.js";
import type { DispatchView } from "./inspect.js";
import { type LockActivity, lockActivityText } from "./lock-activity.js";
import { queuePositions } from "./queued.js";
import { liveRow, type RowConversation, type RowSpend } from "./rows.js";

/** What a dispatch that has no record yet is doing: what `wait` tells a caller it returns to early. */
export interface RunningSnapshot {
  name: string | null;
  dispatchId: string;
  dir: string;
  backend: string | null;
  state: DispatchState;
  /** A heavy slot it waits for or runs in, else its open tool call, else its last event, as a human line. */
  doing: string | null;
  lastEventAt: string | null;
  /** The oldest tool call still open, and for how long it has been open. */
  openToolCall: { label: string; openedAt: string; openSecs: number } | null;
  /** Tokens so far (activity.json), null before the CLI reported any. */
  tokens: { input: number; cached: number; output: number } | null;
  /** Its spend so far: tokens billed and dollars (with their source) against its caps; null before any. */
  spend: RowSpend | null;
  /** Seconds since it was admitted. */
  secs: number | null;
  /** Its attempt in its chain (1 for a dispatch as given: see `dispatch --fallback`). */
  attempt: number;
  /** A `catherd lock` of its agent waiting for a heavy slot or running in one. */
  heavy: LockActivity | null;
  /** A steerable dispatch's talk (rows.ts, RowConversation); null fields for one not steerable. */
  questions: RowConversation["questions"];
  messages: RowConversation["messages"];
  asking: RowConversation["asking"];
}

/**
 * A snapshot of a dispatch a reader just looked at (activity.json, which its supervisor rewrites at most
 * once a second, is read now).
 */
export function runningSnapshot(run: RunPaths, view: DispatchView, clock: Clock): RunningSnapshot {
  const now = clock.wallNow().getTime();
  const row = liveRow(run, view, view.state === "queued" ? queuePositions(run) : undefined);
  const secsSince = (iso: string | null) => {
    const at = iso === null ? Number.NaN : Date.parse(iso);
    return Number.isNaN(at) ? null : Math.max(0, Math.round((now - at) / 1000));
  };
  const open = row.openToolCalls[0];
  return {
    name: row.name,
    dispatchId: row.dispatchId,
    dir: row.dir,
    backend: row.backend,
    state: row.state,
    doing: row.heavy !== null ? lockActivityText(row.heavy, now) : (open?.label ?? row.lastEvent),
    lastEventAt: row.lastEventAt,
    openToolCall:
      open === undefined
        ? null
        : { label: open.label, openedAt: open.openedAt, openSecs: secsSince(open.openedAt) ?? 0 },
    tokens: row.tokens,
    spend: row.spend,
    secs: secsSince(row.admittedAt),
    attempt: row.attempt,
    heavy: row.heavy,
    questions: row.questions ?? null,
    messages: row.messages ?? null,
    asking: row.asking ?? null,
  };
}
