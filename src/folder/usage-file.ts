import {
  costField,
  countsOf,
  type ModelUse,
  TOKEN_FIELDS,
  type TokenCounts,
  tokenField,
  type UsageReport,
} from "../domain/spend/usage.js";
import type { LineFacts } from "../domain/watch/facts.js";

// usage.jsonl (specs/dispatch-folder.md): the usage reports the supervisor read from the CLI's own usage
// log (codex's rollout, gemini's session file) while the agent ran, one JSON line each, so that the record
// is made from the folder's files alone. A line is checked again when it is read back: the file is
// catherd's, but anyone can edit it.

const SCOPES: readonly UsageReport["scope"][] = ["add", "message", "run", "thread"];

/** One line of usage.jsonl: when the CLI logged it (its own clock), and the report. */
export function usageLine(at: string | null, report: UsageReport): string {
  return JSON.stringify({ at, ...report });
}

function countsFrom(raw: unknown): TokenCounts | string {
  if (typeof raw !== "object" || raw === null) return "tokens is not an object";
  const fields = {} as Record<keyof TokenCounts, number | string>;
  for (const key of TOKEN_FIELDS) fields[key] = tokenField((raw as Record<string, unknown>)[key], key);
  return countsOf(fields);
}

function useFrom(raw: unknown): ModelUse | string {
  if (typeof raw !== "object" || raw === null) return "a use is not an object";
  const use = raw as Record<string, unknown>;
  const tokens = countsFrom(use.tokens);
  if (typeof tokens === "string") return tokens;
  const cost = costField(use.costUsd, "costUsd");
  if (typeof cost === "string") return cost;
  const model = typeof use.model === "string" && use.model !== "" ? use.model : null;
  return { model, tokens, costUsd: cost.usd };
}

/** The facts of one line of usage.jsonl: its report, or why it was ignored. Never throws. */
export function parseUsageLine(line: string): LineFacts {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { progress: false, usageIgnored: "a line of usage.jsonl is not JSON" };
  }
  if (typeof value !== "object" || value === null) return { progress: false, usageIgnored: "not an object" };
  const raw = value as Record<string, unknown>;
  const scope = SCOPES.find((s) => s === raw.scope);
  if (scope === undefined || !Array.isArray(raw.uses)) {
    return { progress: false, usageIgnored: "a line of usage.jsonl has no scope or uses" };
  }
  const uses = raw.uses.map(useFrom);
  const bad = uses.find((u): u is string => typeof u === "string");
  if (bad !== undefined) return { progress: false, usageIgnored: bad };
  const key = typeof raw.key === "string" && raw.key !== "" ? raw.key : null;
  return { progress: false, usage: { scope, key, uses: uses as ModelUse[] } };
}
