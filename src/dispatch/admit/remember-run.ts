import { type RunFile, SCHEMA_VERSION } from "../../domain/schemas.js";
import { sameBudget } from "../../domain/spend/run-budget.js";
import type { BackendId } from "../../domain/vocab.js";
import { readRunFileAsIs } from "../../folder/run-file.js";
import { writeJsonAtomic } from "../../infra/atomic.js";
import type { RunPaths } from "../../infra/paths.js";
import type { DispatchRequest } from "../request/dispatch-request.js";

// run.json: the run's own file (specs/dispatch.md §2, step 1), created by its first admission; the caps a
// dispatch gives, its --run-placement, --run-sandbox, --run-account and --run-budget, are remembered in it
// for the next.

// Reading it has one home, folder/run-file.ts: admission, the supervisor, status, notify and the dashboard.

/**
 * run.json, created on the first admission, with the caps `request` gives merged in and its --run-budget
 * in place of the one before, written when they change. Under the run's admission lock. A run.json of a
 * newer catherd is E_SCHEMA_NEWER: never rewritten.
 */
export function ensureRunFile(run: RunPaths, request: DispatchRequest, at: Date): RunFile {
  const read = readRunFileAsIs(run);
  let file: RunFile =
    read.kind === "ok" ? read.value : { schema: SCHEMA_VERSION, id: run.run, createdAt: at.toISOString() };
  if (read.kind === "invalid" && read.error.code === "E_SCHEMA_NEWER") throw read.error;
  const perBackend = { ...(file.maxParallelBackend ?? {}), ...request.maxParallelBackend };
  const perHost = { ...(file.maxParallelHost ?? {}), ...request.maxParallelHost };
  // `none` removes the remembered cap; a number replaces it; not given, it stays.
  const maxParallel =
    request.maxParallel === "none" ? null : (request.maxParallel ?? file.maxParallel ?? null);
  // Given, the budget replaces the one before whole (`none` removes it); not given, it stays.
  const budget =
    request.runBudget === null
      ? (file.budget ?? null)
      : request.runBudget === "none"
        ? null
        : request.runBudget;
  const notifyChanged = request.runNotify !== undefined && (file.notify ?? null) !== request.runNotify;
  const capsChanged =
    notifyChanged ||
    (file.maxParallel ?? null) !== maxParallel ||
    Object.entries(request.maxParallelBackend).some(
      ([backend, cap]) => file.maxParallelBackend?.[backend as BackendId] !== cap,
    ) ||
    Object.entries(request.maxParallelHost).some(([host, cap]) => file.maxParallelHost?.[host] !== cap) ||
    !sameBudget(file.budget ?? null, budget);
  const asked = request.placement.runPlacement;
  const placementChanged = asked !== null && (file.placement ?? "none") !== asked;
  // --run-sandbox: the mode and this dispatch's --allow-net replace the run's; `none` forgets both.
  const sandboxAsked = request.sandbox.runMode;
  const sandbox =
    sandboxAsked === null
      ? file.sandbox
      : sandboxAsked === "none"
        ? undefined
        : { mode: sandboxAsked, allowNet: request.sandbox.allowNet };
  const sandboxChanged = sandboxAsked !== null && JSON.stringify(sandbox) !== JSON.stringify(file.sandbox);
  // --run-account: it replaces the run's; `none` forgets it.
  const accountAsked = request.runAccount;
  const account = accountAsked === null ? file.account : accountAsked === "none" ? undefined : accountAsked;
  const accountChanged = accountAsked !== null && account !== file.account;
  if (read.kind !== "ok" || capsChanged || placementChanged || sandboxChanged || accountChanged) {
    const { placement: _placement, sandbox: _sandbox, account: _account, ...rest } = file;
    const placement = asked === null ? file.placement : asked === "none" ? undefined : asked;
    file = {
      ...rest,
      ...(sandbox === undefined ? {} : { sandbox }),
      maxParallel,
      ...(Object.keys(perBackend).length > 0 ? { maxParallelBackend: perBackend } : {}),
      ...(Object.keys(perHost).length > 0 ? { maxParallelHost: perHost } : {}),
      ...(budget === null && file.budget === undefined ? {} : { budget }),
      ...(request.runNotify === undefined ? {} : { notify: request.runNotify }),
      ...(placement === undefined ? {} : { placement }),
      ...(account === undefined ? {} : { account }),
    };
    writeJsonAtomic(run.runFile, file);
  }
  return file;
}
