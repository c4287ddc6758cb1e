import { formatUsd, groupDigits } from "../domain/budget.js";
import type { RecordFile, SpecFile } from "../domain/schemas.js";
import { count } from "./render.js";

// How usage and cost read in `show`, `result` and `wait` (specs/cli.md): tokens as billed, the dollars
// with where they come from. Dollars are list prices: for someone who pays by subscription, an estimate.

/** " 20.3k tokens $0.0137 (claude-code's figure)": the end of a record's one-line summary. */
export function spendWords(r: RecordFile): string {
  const tokens = r.tokens.input + r.tokens.output;
  const words = tokens > 0 ? ` ${count(tokens)} tokens` : "";
  if (r.costUsd === null) return words;
  const source = r.costSource ?? "reported";
  return `${words} ${source === "priced" ? "~" : ""}${formatUsd(r.costUsd)} (${sourceWords(r, false)})`;
}

function sourceWords(r: RecordFile, long: boolean): string {
  if (r.costSource === "priced") {
    return long ? `catherd's estimate at list prices, ${r.pricedBy ?? "its price table"}` : "estimate";
  }
  return long ? `${r.backend}'s own figure` : `${r.backend}'s figure`;
}

/**
 * The usage lines of `show` and `result`: tokens in all (and by model when there are several), the cost
 * and its source, and each cap of the spec against what was used.
 */
export function spendLines(r: RecordFile, spec: SpecFile | null): string[] {
  const lines: string[] = [];
  const u = r.usage;
  const total = u?.input === undefined ? r.tokens.input + r.tokens.output : u.input + u.output;
  if (u !== undefined && total > 0) {
    lines.push(
      `usage: ${groupDigits(total)} tokens — input ${groupDigits(u.input)} (cached ${groupDigits(u.cachedInput)}, cache writes ${groupDigits(u.cacheWrite)}), output ${groupDigits(u.output)} (reasoning ${groupDigits(u.reasoning)})`,
    );
    if (u.models.length > 1) {
      for (const m of u.models) {
        const cost =
          m.costUsd === null ? "" : `, ${m.costSource === "priced" ? "~" : ""}${formatUsd(m.costUsd)}`;
        lines.push(`  ${m.model ?? "(unknown model)"}: ${groupDigits(m.input + m.output)} tokens${cost}`);
      }
    }
  } else if (total > 0) {
    lines.push(
      `usage: ${groupDigits(total)} tokens (input ${r.tokens.input}, cached ${r.tokens.cached}, output ${r.tokens.output})`,
    );
  }
  if (r.costUsd !== null) {
    lines.push(
      `cost: ${r.costSource === "priced" ? "~" : ""}${formatUsd(r.costUsd)}, ${sourceWords(r, true)} (an estimate if you pay by subscription)`,
    );
  } else if (total > 0) {
    lines.push("cost: unknown (no figure from the CLI, and no known price for its model)");
  }
  const capTokens = spec?.maxTokens ?? null;
  const capCost = spec?.maxCostUsd ?? null;
  if (capTokens !== null) lines.push(`cap: --max-tokens ${capTokens}, used ${groupDigits(total)}`);
  if (capCost !== null) {
    lines.push(
      `cap: --max-cost ${capCost}, used ${r.costUsd === null ? "an unknown amount" : formatUsd(r.costUsd)}`,
    );
  }
  return lines;
}
