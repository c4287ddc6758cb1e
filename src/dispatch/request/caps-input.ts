import { parseCostCap, parseTokenCap, type SpendCaps } from "../../domain/budget.js";
import { CatherdError } from "../../domain/errors.js";

// The dispatch flags that cap its spending: --max-tokens and --max-cost (specs/dispatch.md, "Caps on
// spending"), checked before anything is written.

export interface RawCapsInput {
  maxTokens?: string | undefined;
  maxCost?: string | undefined;
}

/** Validates --max-tokens and --max-cost: E_INPUT_INVALID naming the flag and its rule. */
export function validateCaps(raw: RawCapsInput): SpendCaps {
  return {
    maxTokens: raw.maxTokens === undefined ? null : checked("--max-tokens", raw.maxTokens, parseTokenCap),
    maxCostUsd: raw.maxCost === undefined ? null : checked("--max-cost", raw.maxCost, parseCostCap),
  };
}

function checked(flag: string, text: string, parse: (text: string) => number | string): number {
  const value = parse(text);
  if (typeof value === "number") return value;
  throw new CatherdError("E_INPUT_INVALID", `${flag} ${JSON.stringify(text.slice(0, 80))} is not ${value}`, {
    fix:
      flag === "--max-tokens" ? "give e.g. --max-tokens 50000 or --max-tokens 2M" : "give e.g. --max-cost 5",
  });
}
