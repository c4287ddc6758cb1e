import { queuedText } from "../../dispatch/read/queue-text.js";
import { FILES } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { okValue } from "../../infra/json-file.js";
import type { AttemptWire, BarWire, RowWire } from "../wire.js";
import type { DispatchRow, DispatchView } from "./dispatch-reads.js";
import { usageOf } from "./usage-wire.js";

// A dispatch as the page gets it: status's row (DispatchRow) with what a picture needs besides — the
// supervisor's last word, retries, usage against caps — and its bar on the run's timeline.

/** Everything the dashboard keeps of one dispatch between changes of its folder. */
export interface Entry {
  dir: string;
  dispatchId: string;
  view: DispatchView;
  row: DispatchRow;
  /** The attempt it followed, for folding chains. */
  failoverFrom: string | null;
  wire: RowWire;
  bar: BarWire;
}

/** The row as the page shows it. `activity` is read here: status's row does not carry its time. */
export function rowWire(row: DispatchRow, view: DispatchView): RowWire {
  const activity = row.state === "recorded" ? null : okValue(readFolderJson(view.dir, FILES.activity));
  const asLoose = (v: unknown) => (v ?? null) as Record<string, unknown> | null;
  return {
    dispatchId: row.dispatchId,
    name: row.name ?? row.dispatchId,
    backend: row.backend,
    state: row.state,
    status: row.status,
    reason: row.reason,
    error: row.error,
    admittedAt: row.admittedAt,
    startedAt: row.startedAt,
    endedAt: row.endedAt,
    lastEvent: row.lastEvent,
    lastEventAt: row.lastEventAt,
    activityAt: activity?.at ?? null,
    openToolCalls: row.openToolCalls.map((t) => ({ label: t.label, openedAt: t.openedAt })),
    retrying: activity?.retrying ?? 0,
    retries: activity?.retries ?? view.exit?.retries ?? 0,
    usage: usageOf(asLoose(view.record), asLoose(activity), row.spend),
    queue:
      row.queue === null
        ? null
        : {
            position: row.queue.position,
            since: row.queue.since,
            blockedBy: row.queue.blockedBy,
            blocker: queuedText(row.queue),
            notBefore: row.queue.notBefore,
          },
    attempt: row.attempt,
    earlier: row.earlier.map(attemptWire),
    next: row.next === null ? null : { backend: row.next.backend, notBefore: row.next.notBefore },
    unread: row.unread,
    problems: row.problems,
    ...(row.outcome === undefined ? {} : { outcome: row.outcome }),
    questions: row.questions ?? null,
    messages: row.messages ?? null,
    asking: row.asking ?? null,
    fence: row.fence ?? null,
    check: row.check ?? null,
    race: raceOf(view),
  };
}

/** The race the row's attempt belongs to, as its admit.json names it. */
function raceOf(view: DispatchView): NonNullable<RowWire["race"]> | null {
  const race = view.admit?.race;
  return race === undefined ? null : { name: race.name, raceId: race.raceId, attempt: race.attempt };
}

export function attemptWire(a: DispatchRow["earlier"][number]): AttemptWire {
  return { dispatchId: a.dispatchId, attempt: a.attempt, backend: a.backend, status: a.status, kind: a.kind };
}

/** The dispatch's bar: admitted → (queue) → record; `chain` is its chain's first attempt. */
export function barWire(row: DispatchRow, view: DispatchView, chain: string): BarWire {
  const ms = (iso: string | null | undefined) => {
    const t = iso == null ? Number.NaN : Date.parse(iso);
    return Number.isFinite(t) ? t : null;
  };
  const admitted = ms(view.admit?.admittedAt) ?? (Number.isFinite(view.admittedAtMs) ? view.admittedAtMs : 0);
  const queued = view.queued !== null;
  const left = queued
    ? (ms(view.promoted?.at) ?? ms(view.supervisor?.startedAt) ?? ms(view.exit?.endedAt))
    : null;
  return {
    dispatchId: row.dispatchId,
    chain,
    followUpOf: view.admit?.followUpOf ?? null,
    attempt: row.attempt,
    name: row.name ?? row.dispatchId,
    state: row.state,
    status: row.status,
    admittedAtMs: admitted,
    queuedUntilMs: left,
    queued,
    endedAtMs: ms(view.record?.endedAt ?? view.exit?.endedAt),
  };
}
