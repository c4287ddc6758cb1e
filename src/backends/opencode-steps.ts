import type { ErrorFact } from "../domain/ending/failure.js";
import type { LineFacts } from "../domain/watch/facts.js";
import { errorFact, httpStatus, providerBody } from "./classify.js";
import { asRecord, asString, modelUse, tokenFields, usageFacts } from "./line-parsing.js";

// What opencode says of a model step and of a failure, the same in `run --format json`'s lines
// (opencode.ts) and in the server's events (opencode-serve.ts): a step-finish part's tokens and cost, and
// an error's `{name, data}`.

/**
 * One step's usage. opencode's tokens.input excludes cache reads and writes and tokens.output excludes
 * reasoning (it subtracts them from the provider's counts); catherd's input and output include them.
 */
export function stepUsage(
  tokens: Record<string, unknown>,
  cost: unknown,
): Pick<LineFacts, "usage" | "usageIgnored"> {
  const f = tokenFields(tokens, ["input", "output", "reasoning"] as const);
  const cache = tokenFields(asRecord(tokens.cache) ?? {}, ["read", "write"] as const);
  if (typeof f === "string" || typeof cache === "string") {
    return { usageIgnored: typeof f === "string" ? f : `cache.${cache}` };
  }
  const counts = {
    input: f.input + cache.read + cache.write,
    cachedInput: cache.read,
    cacheWrite: cache.write,
    output: f.output + f.reasoning,
    reasoning: f.reasoning,
  };
  const used = counts.input + counts.output > 0;
  const figure = cost === 0 && used ? null : cost;
  return usageFacts("add", null, [modelUse(null, counts, figure)]);
}

/** The provider's failure on an `error` line: its words, status, codes, and any Retry-After header. */
export function opencodeError(error: Record<string, unknown> | null, atMs: number | null): ErrorFact {
  const data = asRecord(error?.data);
  const name = asString(error?.name) ?? "error";
  const message = asString(data?.message);
  const status = httpStatus(data?.statusCode);
  const body = providerBody(asString(data?.responseBody) ?? "");
  const fact = errorFact({
    text: message ?? name,
    status,
    codes: [name, ...(body?.codes ?? [])],
    words: message === null ? "cli" : "provider",
    fromMs: atMs,
  });
  const headers = asRecord(data?.responseHeaders);
  const retryAfter = asString(headers?.["retry-after"]);
  if (fact.retryAfter !== null || retryAfter === null || !/^\d+$/.test(retryAfter)) return fact;
  return { ...fact, retryAfter: { delayMs: Number(retryAfter) * 1000, fromMs: atMs } };
}
