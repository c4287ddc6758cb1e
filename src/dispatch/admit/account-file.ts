import { backendFor } from "../../backends/backend-registry.js";
import {
  accountFor,
  type Blocked,
  blockerOf,
  type Candidate,
  type Caps,
  type Slot,
} from "../../domain/admission/admission-rules.js";
import { type AccountFile, SCHEMA_VERSION } from "../../domain/schemas.js";
import type { BackendId } from "../../domain/vocab.js";
import { accountsOf } from "../../quota/accounts.js";

// Which account a dispatch that starts now runs on, and account.json that says so (specs/quota.md): written
// before its supervisor starts — at admission, by a hand-over, or by the promotion that chose it — and read
// by the supervisor, which gives the CLI the account's folder.

/** Whether a dispatch may start now beside `slots`, and on which account (null: it asks for none). */
export function startDecision(
  candidate: Candidate,
  slots: readonly Slot[],
  caps: Caps,
  nowMs: number,
): { blocked: Blocked | null; account: string | null } {
  const blocked = blockerOf(candidate, slots, caps, nowMs);
  if (blocked !== null) return { blocked, account: null };
  return { blocked: null, account: accountFor(candidate, slots, caps, nowMs)?.account ?? null };
}

/**
 * account.json of a dispatch of `backend` that runs on `name`, its folder as the home declares it now; null
 * for none. An account removed since it was asked for runs as `default` would: the environment's own.
 */
export function accountFileOf(
  home: string,
  backend: BackendId,
  name: string | null,
  at: Date,
): AccountFile | null {
  if (name === null) return null;
  const dir = accountsOf(home, backend).find((a) => a.name === name)?.dir ?? null;
  const variable = dir === null ? null : (backendFor(backend).accountVariable ?? null);
  return { schema: SCHEMA_VERSION, backend, name, dir, variable, at: at.toISOString() };
}
