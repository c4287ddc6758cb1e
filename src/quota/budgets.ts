import * as path from "node:path";
import { CatherdError } from "../domain/errors.js";
import type { Period } from "../domain/quota/period.js";
import { MAX_BUDGETS, type PeriodBudget, scopeKey } from "../domain/quota/period-budget.js";
import {
  type BudgetsFile,
  budgetsFileSchema,
  type PeriodBudgetEntry,
} from "../domain/quota/quota-schemas.js";
import { SCHEMA_VERSION } from "../domain/schema-version.js";
import { createJsonExclusive, makeDir, writeJsonAtomic } from "../infra/atomic.js";
import { readJsonFile } from "../infra/json-file.js";
import { lockWithin } from "../infra/lock.js";
import { budgetsFile, budgetsLock, budgetsWarnedDir } from "./home-files.js";

// The budgets by period a home declares (specs/quota.md, "Budgets by period"): budgets.json, rewritten
// whole under budgets.lock by `catherd budget set|remove`, read by admission, promotion, the record's
// warning and `usage`. A home without the file declares none and pays one failed read.

/** The budgets declared in `home`; a missing file declares none, a broken one is an error with its fix. */
export function readBudgets(home: string): PeriodBudgetEntry[] {
  const read = readJsonFile(budgetsFile(home), budgetsFileSchema);
  if (read.kind === "missing") return [];
  if (read.kind === "invalid") {
    throw new CatherdError("E_INPUT_INVALID", `${budgetsFile(home)}: ${read.error.message}`, {
      fix: "mend the file by hand, or remove it and set the budgets again (catherd budget set)",
    });
  }
  return read.value.budgets;
}

/**
 * The budgets as a decision takes them: a file that cannot be read holds nothing (a broken budgets.json
 * must not stop every dispatch; `catherd budget list` and `usage` say what is wrong with it).
 */
export function budgetsOrNone(home: string): PeriodBudgetEntry[] {
  try {
    return readBudgets(home);
  } catch {
    return [];
  }
}

/** Sets the budget of `budget.scope` and `budget.per`, replacing the one there was. */
export async function setBudget(home: string, budget: PeriodBudget, at: Date): Promise<PeriodBudgetEntry> {
  const entry: PeriodBudgetEntry = { ...budget, setAt: at.toISOString() };
  await rewriteBudgets(home, (budgets) => {
    const others = budgets.filter((b) => !(b.scope === budget.scope && b.per === budget.per));
    if (others.length >= MAX_BUDGETS) {
      throw new CatherdError(
        "E_INPUT_INVALID",
        `the home has ${others.length} budgets: at most ${MAX_BUDGETS}`,
        {
          fix: "remove one first (catherd budget list, catherd budget remove <scope> --per <period>)",
        },
      );
    }
    return [...others, entry];
  });
  return entry;
}

/** Removes the budget of `scope` per `per`; true when there was one. */
export async function removeBudget(home: string, scope: string, per: Period): Promise<boolean> {
  let removed = false;
  await rewriteBudgets(home, (budgets) => {
    const kept = budgets.filter((b) => !(b.scope === scope && b.per === per));
    removed = kept.length !== budgets.length;
    return removed ? kept : null;
  });
  return removed;
}

/** Rewrites budgets.json whole under budgets.lock, from what it holds now; `change` null: left as it is. */
async function rewriteBudgets(
  home: string,
  change: (budgets: PeriodBudgetEntry[]) => PeriodBudgetEntry[] | null,
): Promise<void> {
  makeDir(home);
  const release = await lockWithin({ lockPath: budgetsLock(home), staleMs: 10_000, waitMs: 5_000 });
  try {
    const budgets = change(readBudgets(home));
    if (budgets === null) return;
    const next: BudgetsFile = { schema: SCHEMA_VERSION, budgets };
    writeJsonAtomic(budgetsFile(home), next);
  } finally {
    await release().catch(() => {});
  }
}

/**
 * How far ahead of the clock the calendar of periods is read: `CATHERD_TEST_ONLY_CALENDAR_SHIFT_MS`
 * (specs/supervisor.md, "Test hooks"), so that a test reaches a period's end in seconds; 0 when unset.
 */
export function calendarShiftMs(env: NodeJS.ProcessEnv = process.env): number {
  const given = Number(env.CATHERD_TEST_ONLY_CALENDAR_SHIFT_MS);
  return Number.isSafeInteger(given) ? given : 0;
}

/**
 * Claims the warning of a budget for one period: `<home>/budgets-warned/<scope>-<per>-<period key>`,
 * created exclusively. True for the one claimant; false when it was given already.
 */
export function claimBudgetWarning(home: string, budget: PeriodBudget, periodKey: string, at: Date): boolean {
  makeDir(budgetsWarnedDir(home));
  const file = path.join(budgetsWarnedDir(home), `${scopeKey(budget.scope)}-${budget.per}-${periodKey}.json`);
  return createJsonExclusive(file, { schema: SCHEMA_VERSION, at: at.toISOString(), pid: process.pid });
}
