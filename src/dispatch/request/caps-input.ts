import { allBackends } from "../../backends/backend-registry.js";
import type { Backend } from "../../backends/types.js";
import { CatherdError } from "../../domain/errors.js";
import type { RecordFile, SpecFile } from "../../domain/schemas.js";
import { parseCostCap, parseTokenCap, remainingCaps, type SpendCaps } from "../../domain/spend/budget.js";
import { parseRunBudget, type RunBudget } from "../../domain/spend/run-budget.js";
import type { Concern } from "./concern.js";

// The dispatch flags that cap spending: --max-tokens and --max-cost for the dispatch (specs/dispatch.md,
// "Caps on spending"), --run-budget for its run ("A run's budget"), checked before anything is written.

export interface RawCapsInput {
  maxTokens?: string | undefined;
  maxCost?: string | undefined;
}

/**
 * Validates --max-tokens and --max-cost: E_INPUT_INVALID naming the flag and its rule, or naming the
 * backend when its output reports no usage (exec): a cap nothing is counted against could never fire.
 */
export function validateCaps(raw: RawCapsInput, backend: Backend): SpendCaps {
  const caps = {
    maxTokens: raw.maxTokens === undefined ? null : checked("--max-tokens", raw.maxTokens, parseTokenCap),
    maxCostUsd: raw.maxCost === undefined ? null : checked("--max-cost", raw.maxCost, parseCostCap),
  };
  const given = caps.maxTokens !== null ? "--max-tokens" : caps.maxCostUsd !== null ? "--max-cost" : null;
  if (given === null || backend.reportsUsage) return caps;
  const counted = allBackends()
    .filter((b) => b.reportsUsage)
    .map((b) => b.id);
  throw new CatherdError(
    "E_INPUT_INVALID",
    `${given} cannot hold a --backend ${backend.id} dispatch: ${backend.id} reports no usage, so the cap would never fire`,
    {
      fix: `leave ${given} out (bound the command with --wall or --idle), or dispatch an agent CLI that reports its tokens (${counted.join(", ")})`,
    },
  );
}

function checked(flag: string, text: string, parse: (text: string) => number | string): number {
  const value = parse(text);
  if (typeof value === "number") return value;
  throw new CatherdError("E_INPUT_INVALID", `${flag} ${JSON.stringify(text.slice(0, 80))} is not ${value}`, {
    fix:
      flag === "--max-tokens" ? "give e.g. --max-tokens 50000 or --max-tokens 2M" : "give e.g. --max-cost 5",
  });
}

/**
 * Validates --run-budget: the budget to remember in run.json, `none` to remove it, null when not given;
 * else E_INPUT_INVALID naming the part and its rule.
 */
export function validateRunBudget(text: string | undefined): RunBudget | "none" | null {
  if (text === undefined) return null;
  const parsed = parseRunBudget(text);
  if (parsed === "none" || !("rule" in parsed)) return parsed;
  throw new CatherdError(
    "E_INPUT_INVALID",
    `--run-budget ${JSON.stringify(text.slice(0, 80))}: ${parsed.rule}`,
    {
      fix: "give e.g. --run-budget tokens=2M,usd=25,minutes=600 (any of the three), or --run-budget none",
    },
  );
}

/** The spending caps of one dispatch: --max-tokens and --max-cost, which the supervisor stops it at. */
export const spendCaps = {
  options: {
    "max-tokens": {
      type: "string",
      value: "<n>",
      description:
        "stop the agent once it has used this many tokens, input (cached included) plus output: 50000, 2M",
      default: "no cap",
    },
    "max-cost": {
      type: "string",
      value: "<usd>",
      description:
        "stop the agent once it has spent this many US dollars at list prices (an estimate on a subscription), e.g. 5",
      default: "no cap",
    },
  },
  validate: (raw, { backend }) => ({ caps: validateCaps(raw, backend) }),
  toSpec: ({ caps }) => ({ maxTokens: caps.maxTokens, maxCostUsd: caps.maxCostUsd }),
  toPlan: ({ caps }) => ({ maxCostUsd: caps.maxCostUsd }),
  // The attempts of a chain share one budget; a follow-up turn takes its own flags.
  carry: ({ spec, record }, to) =>
    to.kind === "follow-up" || record == null ? {} : { caps: chainCaps(spec, record) },
} satisfies Concern<RawCapsInput, { caps: SpendCaps }>;

/**
 * A chain's next attempt gets what the recorded attempt's caps leave (domain/spend/budget.ts);
 * E_INPUT_INVALID when they are spent.
 */
function chainCaps(spec: SpecFile | null, record: RecordFile): SpendCaps {
  const caps = { maxTokens: spec?.maxTokens ?? null, maxCostUsd: spec?.maxCostUsd ?? null };
  const left = remainingCaps(caps, {
    tokens: record.tokens.input + record.tokens.output,
    costUsd: record.costUsd,
    priced: record.costSource === "priced",
  });
  if (typeof left === "string") {
    throw new CatherdError("E_INPUT_INVALID", left, { fix: "dispatch again with higher caps" });
  }
  return left;
}
