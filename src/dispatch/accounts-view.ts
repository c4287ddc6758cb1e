import { allBackends } from "../backends/backend-registry.js";
import {
  type AccountGate,
  type AccountWindow,
  accountGate,
  DEFAULT_HEADROOM_PERCENT,
} from "../domain/quota/gate.js";
import type { BackendId } from "../domain/vocab.js";
import { runPaths } from "../infra/paths.js";
import { readAccountWindows } from "../quota/account-state.js";
import { accountsOf } from "../quota/accounts.js";
import { runNames } from "./read/locate.js";
import { liveMarkersOf } from "./read/queued.js";

// The home's accounts as `catherd account list`, `usage --by account` and the dashboard show them
// (specs/quota.md): each account of each CLI, its windows as last reported, whether it takes work now,
// and the queued dispatches that wait for it.

/** One account, as shown. */
export interface AccountView {
  backend: BackendId;
  name: string;
  /** Its configuration folder; null for `default` (the environment's own). */
  dir: string | null;
  windows: AccountWindow[];
  /** At the default headroom: open, probing after a reset, or held until a time. */
  gate: AccountGate;
  /** Queued dispatches of the home parked for a window whose pool names this account. */
  waiting: number;
}

/**
 * Every account the home knows: each CLI's `default` where anything was reported of it, and every account
 * declared; with what waits for it, read from the runs' live markers (`parked`, when the caller has
 * read them already).
 */
export function accountsView(
  home: string,
  nowMs: number,
  parked: readonly ParkedDispatch[] = parkedForWindows(home),
): AccountView[] {
  const waiting = parkedByAccount(parked);
  const views: AccountView[] = [];
  for (const backend of allBackends()) {
    if (backend.accountVariable === undefined) continue;
    for (const account of accountsOf(home, backend.id)) {
      const windows = readAccountWindows(home, { backend: backend.id, account: account.name });
      const key = `${backend.id}/${account.name}`;
      if (account.dir === null && windows.length === 0 && !waiting.has(key)) continue;
      views.push({
        backend: backend.id,
        name: account.name,
        dir: account.dir,
        windows,
        gate: accountGate(windows, DEFAULT_HEADROOM_PERCENT, nowMs),
        waiting: waiting.get(key) ?? 0,
      });
    }
  }
  return views;
}

/** A queued dispatch of the home that a window holds, and the accounts of its pool. */
export interface ParkedDispatch {
  run: string;
  dispatchId: string;
  name: string;
  backend: BackendId;
  /** The accounts it may run on (its pool): it waits for the first of them to take work. */
  pool: string[];
}

/** Every queued dispatch of the home whose live marker says a window holds it, run by run. */
export function parkedForWindows(home: string): ParkedDispatch[] {
  const parked: ParkedDispatch[] = [];
  for (const run of runNames(home)) {
    for (const marker of liveMarkersOf(runPaths(home, run))) {
      if (marker.queued?.blockedBy !== "window" || marker.backend === undefined) continue;
      const { dispatchId, name, backend } = marker;
      parked.push({ run, dispatchId, name, backend, pool: marker.accounts?.pool ?? [] });
    }
  }
  return parked;
}

/** How many queued dispatches a window holds, by `backend/account` of each account of their pools. */
function parkedByAccount(parked: readonly ParkedDispatch[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const p of parked) {
    for (const account of p.pool) {
      const key = `${p.backend}/${account}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}
