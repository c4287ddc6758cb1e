import { type Tokens, ZERO_TOKENS } from "../domain/facts.js";
import { type ExitFacts, statusByPrecedence } from "../domain/status.js";
import type { RunSummary } from "../domain/summary.js";
import type { Outcome } from "./types.js";

/** Default timeouts shared by the agent backends (design.md §8). */
export const AGENT_DEFAULTS = { idleMs: 15 * 60_000, wallMs: 90 * 60_000 } as const;

/** Parses a JSON object line; anything else (torn JSON, an array, a number) is null. */
export function parseObject(line: string): Record<string, unknown> | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{")) return null;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

export function asString(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

export function asCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

export function tokens(input: number, cached: number, output: number): Tokens {
  return { input, cached, output };
}

/** A one-line excerpt for human output. */
export function oneLine(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Wording of usage and rate limits across the CLIs: HTTP 429, "rate limit", "usage limit", "quota". */
export const LIMIT_WORDING =
  /\b429\b|rate[ _-]?limit|usage[ _-]?limit|quota|too many requests|resource[ _]exhausted/i;

/** The common finalize: status by precedence, the summary's reply, tokens and cost, and an error if failed. */
export function finalizeFromSummary(summary: RunSummary, exit: ExitFacts): Outcome {
  const status = statusByPrecedence(exit, summary);
  const error =
    status === "ok"
      ? null
      : {
          code: exit.reason,
          message:
            summary.final?.isError === true && summary.final.message !== null
              ? summary.final.message
              : (summary.lastError ?? describeExit(exit)),
        };
  return {
    status,
    reply: summary.reply,
    tokens: { ...ZERO_TOKENS, ...summary.tokens },
    costUsd: summary.costUsd,
    error,
  };
}

function describeExit(exit: ExitFacts): string {
  if (exit.signal !== null) return `${exit.reason}: ended by ${exit.signal}`;
  if (exit.code !== null) return `${exit.reason}: exit code ${exit.code}`;
  return exit.reason;
}
