import { type ModelUseOrWhy, modelUse, tokenFields } from "./line-parsing.js";

// codex's token counts (exec's turn.completed and rollout records, the app-server's tokenUsage) in one
// place: specs/backends.md, "Usage and cost".

export const USAGE_FIELDS = [
  "input_tokens",
  "cached_input_tokens",
  "cache_write_input_tokens",
  "output_tokens",
  "reasoning_output_tokens",
] as const;

/**
 * codex's usage in catherd's convention: its input_tokens already includes the cached ones (and cache
 * writes), its output_tokens the reasoning ones, as the Responses API counts them. A provider that counts
 * reasoning apart from output (reasoning above output) has it added.
 */
export function codexUse(model: string | null, usage: Record<string, unknown>): ModelUseOrWhy {
  const f = tokenFields(usage, USAGE_FIELDS);
  if (typeof f === "string") return f;
  const reasoning = f.reasoning_output_tokens;
  const output = reasoning > f.output_tokens ? f.output_tokens + reasoning : f.output_tokens;
  return modelUse(model, {
    input: f.input_tokens,
    cachedInput: f.cached_input_tokens,
    cacheWrite: f.cache_write_input_tokens,
    output,
    reasoning,
  });
}
