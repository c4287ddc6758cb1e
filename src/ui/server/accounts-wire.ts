import { accountsView, parkedForWindows } from "../../dispatch/accounts-view.js";
import type { AccountGate, AccountWindow } from "../../domain/quota/gate.js";
import type { AccountsWire, AccountWindowWire, AccountWire, PushWire } from "../wire.js";

// The home's accounts for the dashboard (specs/ui.md, "Accounts"): `catherd account list`'s use case
// (src/dispatch/accounts-view.ts) as wire, each account with the parked dispatches it holds; and the watch
// that tells the open pages when that picture changed.

/** Parked dispatches listed per account; the rest are counted. */
export const MAX_PARKED_SHOWN = 20;

/** The home's accounts at `nowMs`: every account `catherd account list` shows, as it shows it. */
export function accountsWire(home: string, nowMs: number): AccountsWire {
  const parked = parkedForWindows(home);
  const accounts = accountsView(home, nowMs, parked).map((a): AccountWire => {
    const mine = parked.filter((p) => p.backend === a.backend && p.pool.includes(a.name));
    return {
      backend: a.backend,
      name: a.name,
      dir: a.dir,
      gate: gateWire(a.gate),
      windows: a.windows.map(windowWire),
      waiting: a.waiting,
      parked: mine.slice(0, MAX_PARKED_SHOWN).map(({ run, dispatchId, name }) => ({ run, dispatchId, name })),
    };
  });
  return { accounts, now: nowMs };
}

function gateWire(gate: AccountGate): AccountWire["gate"] {
  if (gate.state === "open") return { state: "open" };
  if (gate.state === "probe") return { state: "probe", window: windowName(gate.window) };
  return { state: "held", until: new Date(gate.until).toISOString(), window: windowName(gate.window) };
}

function windowWire(w: AccountWindow): AccountWindowWire {
  return {
    name: windowName(w),
    usedPercent: w.usedPercent,
    windowMinutes: w.windowMinutes,
    resetsAt: w.resetsAt,
    status: w.status ?? null,
    seenAt: w.seenAt,
  };
}

/** "claude/five_hour", or the bare name of a window with no limit ("primary"), as `account list` says it. */
function windowName(w: AccountWindow): string {
  return w.limit === "" ? w.window : `${w.limit}/${w.window}`;
}

/** Coalesces the checks asked for by bursts of changes to one per this long. */
const CHECK_MS = 500;

/**
 * Tells the open pages when the accounts' picture changes: a window reported, a gate that opens at its
 * reset, a dispatch parked or started. It is judged again on each `check` (the slow poll) and shortly
 * after `soon` (a run's rows changed), and an `accounts` push is emitted when it differs from the last.
 */
export class AccountsWatch {
  private last: string | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly home: string,
    private readonly nowMs: () => number,
    private readonly emit: (push: PushWire) => void,
  ) {}

  /** Judges the picture now; emits when it changed since the last judgement. */
  check(): void {
    // The time is left out: only what the files and the gates say counts as a change.
    const digest = JSON.stringify(accountsWire(this.home, this.nowMs()).accounts);
    if (this.last !== null && digest !== this.last) this.emit({ type: "accounts" });
    this.last = digest;
  }

  /** Judges it again within CHECK_MS (a burst of changes costs one judgement). */
  soon(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.check();
    }, CHECK_MS);
    this.timer.unref();
  }

  close(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
