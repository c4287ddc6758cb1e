import { NO_SLOTS, observeSlots, type SlotSignals } from "../src/domain/lock/slot-time.js";
import type { LineFacts } from "../src/domain/watch/facts.js";
import {
  decide,
  initialWatch,
  nextDeadline,
  observe,
  type PollSignals,
  type WatchLimits,
  type WatchState,
} from "../src/domain/watch/watch.js";
import type { Resume } from "./resume-point.js";
import type { Rules, Stop } from "./sensor.js";

/** Where the watch starts: the agent's start, or what an adopted dispatch's folder says (resume.ts). */
export function startState(resume: Resume | undefined, now: number): WatchState {
  const state = initialWatch(resume?.startedAt ?? now);
  if (resume === undefined) return state;
  return { ...state, stalled: resume.stalled, slotWaitedMs: resume.slotWaitedMs };
}

/**
 * The watch's state, changed only by the pure core (src/domain/watch/watch.ts, slot-time.ts) on the facts the
 * sensors bring, and the rules the loop applies after each poll's looks.
 */
export class WatchCore implements Rules {
  constructor(
    public state: WatchState,
    private readonly limits: WatchLimits,
    /** Told of a stall verdict: the notice is the caller's to give. */
    private readonly onStall: (quietMs: number) => void,
  ) {}

  /** One line's facts, read at `at`. */
  line(facts: LineFacts, at: number): void {
    this.state = observe(this.state, facts, at);
  }

  /** What the locks report at `now`; whether the time waited for heavy slots moved. */
  slots(signals: SlotSignals, now: number): boolean {
    const next = observeSlots(this.state, signals, now);
    const moved = next.slotWaitedMs !== this.state.slotWaitedMs;
    this.state = next;
    return moved;
  }

  judge(seen: PollSignals, now: number): Stop | null {
    const { state, verdict } = decide(this.state, seen, this.limits, now);
    this.state = state;
    if (verdict.kind === "stall") this.onStall(verdict.quietMs);
    if (verdict.kind !== "stop") return null;
    return {
      reason: verdict.reason,
      errorKind: verdict.errorKind,
      budget: verdict.reason === "budget" ? (seen.budget ?? null) : null,
      disk: null,
    };
  }

  nextLookAt(seen: PollSignals): number {
    return nextDeadline(this.state, this.limits, seen.steer);
  }

  /** The state the watch ends in at `at`: a wait for a slot still open ends with it, counted up to then. */
  endedAt(at: number): WatchState {
    return observeSlots(this.state, NO_SLOTS, at);
  }
}
