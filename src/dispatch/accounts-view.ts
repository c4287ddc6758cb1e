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
 * declared; with what waits for it, read from the runs' live markers.
 */
export function accountsView(home: string, nowMs: number): AccountView[] {
  const waiting = parkedByAccount(home);
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

/** How many queued dispatches a window holds, by `backend/account` of each account of their pools. */
function parkedByAccount(home: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of runNames(home)) {
    for (const marker of liveMarkersOf(runPaths(home, name))) {
      if (marker.queued?.blockedBy !== "window" || marker.backend === undefined) continue;
      for (const account of marker.accounts?.pool ?? []) {
        const key = `${marker.backend}/${account}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
  }
  return counts;
}
