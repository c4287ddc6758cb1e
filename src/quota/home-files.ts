import * as path from "node:path";
import { BUDGETS_FILE_NAME } from "../domain/quota/period-budget.js";
import type { BackendId } from "../domain/vocab.js";

// Where the home keeps its quota state (specs/quota.md, "Files"):
//
//   <home>/accounts.json                      the accounts declared (`catherd account add`)
//   <home>/accounts.lock                      held while accounts.json is rewritten
//   <home>/quota/<backend>/<account>.json     the account's windows, as its CLI last reported them
//   <home>/quota/<backend>/<account>.lock     held while that file is merged into
//   <home>/parked/<run>.json                  a run holds work parked until a time
//   <home>/waker.lock                         held by the one waker of the home, while anything is parked
//   <home>/budgets.json                       the budgets by period (`catherd budget set`)
//   <home>/budgets.lock                       held while budgets.json is rewritten
//   <home>/budgets-warned/<scope>-<per>-<key> a budget's warning of one period was given

export function accountsFile(home: string): string {
  return path.join(home, "accounts.json");
}

export function accountsLock(home: string): string {
  return path.join(home, "accounts.lock");
}

export function accountStateFile(home: string, backend: BackendId, account: string): string {
  return path.join(home, "quota", backend, `${account}.json`);
}

export function accountStateLock(home: string, backend: BackendId, account: string): string {
  return path.join(home, "quota", backend, `${account}.lock`);
}

export function parkedDir(home: string): string {
  return path.join(home, "parked");
}

export function parkedFile(home: string, run: string): string {
  return path.join(parkedDir(home), `${run}.json`);
}

export function wakerLock(home: string): string {
  return path.join(home, "waker.lock");
}

export function budgetsFile(home: string): string {
  return path.join(home, BUDGETS_FILE_NAME);
}

export function budgetsLock(home: string): string {
  return path.join(home, "budgets.lock");
}

export function budgetsWarnedDir(home: string): string {
  return path.join(home, "budgets-warned");
}
