import type { TokenCounts } from "../domain/spend/usage.js";

// Prices of tokens from @pydantic/genai-prices' bundled snapshot, offline: the package makes no request
// unless asked to update (catherd never asks). Its table is about 0.8 MB of code: loading it costs about
// 60 ms and 14 MB (specs/performance.md, "Usage, caps and prices"), so it is imported only on the first
// price asked, never on a start path — a supervisor loads it only for a --max-cost to watch or a record to
// price.

/** The snapshot that prices: the package and its exact version (package.json pins it; a test checks). */
export const PRICE_TABLE = "@pydantic/genai-prices 0.1.8";

/**
 * The table's tiers (a long-context rate above 200,000 prompt tokens) are per request; catherd prices
 * the sum of a dispatch's requests. Summed tokens are therefore priced in parts of at most this many,
 * each below every tier: a sum is priced at the base rates. A long-context request is then under-priced:
 * an estimate, as every priced figure is.
 */
export const PRICED_PART_TOKENS = 100_000;

/** Prices tokens of a model billed by a provider (the table's provider id), at a time; null: no known price. */
export type Pricer = (provider: string | null, model: string, tokens: TokenCounts, at: Date) => number | null;

let loading: Promise<Pricer> | null = null;

/** The pricer, loading the table on first use. */
export function loadPricer(): Promise<Pricer> {
  loading ??= import("@pydantic/genai-prices").then(({ calcPrice }) => {
    const pricer: Pricer = (provider, model, tokens, at) => {
      // Without a provider any match would be a guess across providers: no price.
      if (provider === null) return null;
      const parts = Math.max(
        1,
        Math.ceil(tokens.input / PRICED_PART_TOKENS),
        Math.ceil(tokens.output / PRICED_PART_TOKENS),
      );
      try {
        const result = calcPrice(
          {
            input_tokens: tokens.input / parts,
            cache_read_tokens: tokens.cachedInput / parts,
            cache_write_tokens: tokens.cacheWrite / parts,
            output_tokens: tokens.output / parts,
            output_reasoning_tokens: tokens.reasoning / parts,
          },
          model,
          { providerId: provider, timestamp: at },
        );
        return result === null || !Number.isFinite(result.total_price) ? null : result.total_price * parts;
      } catch {
        // The table refuses counts it cannot decompose: no price rather than a wrong one.
        return null;
      }
    };
    return pricer;
  });
  return loading;
}
