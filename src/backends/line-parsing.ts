import { type ExitFacts, type JudgeRules, judgeEnding } from "../domain/ending/ending.js";
import type { StreamSummary } from "../domain/ending/summary.js";
import {
  accounts,
  costField,
  countsOf,
  type ModelUse,
  type TokenCounts,
  tokenField,
  totalOf,
  type UsageReport,
} from "../domain/spend/usage.js";
import { cutChars, inertText } from "../domain/text/inert-text.js";
import { cutDeeperThan, DEEP_MARKER, MAX_LINE_DEPTH } from "../domain/text/json-depth.js";
import type { LineFacts } from "../domain/watch/facts.js";
import type { Outcome } from "./types.js";

/** Default timeouts shared by the agent backends (specs/supervisor.md, "The loop"). */
export const AGENT_DEFAULTS = { idleMs: 15 * 60_000, wallMs: 90 * 60_000 } as const;

/**
 * Parses a JSON object line; anything else (torn JSON, an array, a number) is null. Every line an agent
 * CLI prints is parsed here, and what it returns is at most MAX_LINE_DEPTH deep: a deeper subtree is
 * replaced by DEEP_MARKER (specs/backends.md, "Depth"), so that no later walk of it overflows the stack.
 */
export function parseObject(line: string): Record<string, unknown> | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{")) return null;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  cutDeeperThan(value, MAX_LINE_DEPTH, DEEP_MARKER);
  return value as Record<string, unknown>;
}

export function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

export function asString(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** A session or thread id: a non-blank string of at most 256 characters, else null (it names nothing). */
export function asId(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" && value.length <= 256 ? value : null;
}

/**
 * Checked token fields of a CLI's usage object (absent ones are 0), or what is wrong with the first bad
 * one: usage that does not add up is ignored whole, never half-counted.
 */
export function tokenFields<K extends string>(
  usage: Record<string, unknown>,
  keys: readonly K[],
): Record<K, number> | string {
  const out = {} as Record<K, number>;
  for (const key of keys) {
    const value = tokenField(usage[key], key);
    if (typeof value === "string") return value;
    out[key] = value;
  }
  return out;
}

/** A model's share of a report, or why it does not add up. */
export type ModelUseOrWhy = ModelUse | string;

/** One model's share of a report, from counts in catherd's convention and the CLI's dollar field. */
export function modelUse(
  model: string | null,
  counts: Record<keyof TokenCounts, number> | string,
  cost: unknown = undefined,
): ModelUse | string {
  if (typeof counts === "string") return counts;
  const tokens = countsOf(counts);
  if (typeof tokens === "string") return tokens;
  const usd = costField(cost, "cost");
  if (typeof usd === "string") return usd;
  return { model, tokens, costUsd: usd.usd };
}

/** The facts of a usage report: its uses, or — when one of them does not add up — why it was ignored. */
export function usageFacts(
  scope: UsageReport["scope"],
  key: string | null,
  uses: readonly (ModelUse | string)[],
): Pick<LineFacts, "usage" | "usageIgnored"> {
  const bad = uses.find((u): u is string => typeof u === "string");
  if (bad !== undefined) return { usageIgnored: bad };
  return { usage: { scope, key, uses: uses as ModelUse[] } };
}

/** The value of the last of `names` on a command line (`--model x` or `--model=x`), or null. */
export function flagValue(args: readonly string[], names: readonly string[]): string | null {
  let found: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (names.includes(arg) && i + 1 < args.length) found = args[++i] ?? null;
    else {
      const eq = arg.indexOf("=");
      if (eq > 0 && names.includes(arg.slice(0, eq))) found = arg.slice(eq + 1);
    }
  }
  return found === "" ? null : found;
}

export function asCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/** White space that oneLine folds: anything but a lone space. */
const FOLDABLE_SPACE = /[^\S ]| {2}/;

/**
 * A one-line excerpt for human output, inert for a terminal (an agent's escape sequences removed before
 * the cut, so that none is kept in part: domain/text/inert-text.ts).
 */
export function oneLine(text: string, max = 60): string {
  // Cut before folding white space: this runs on every line, and an agent message can be megabytes.
  const cut = text.length > max * 4;
  const head = inertText(cut ? text.slice(0, max * 4) : text);
  // Most texts (a command, a short message) have only single spaces: testing is cheaper than replacing.
  const flat = (FOLDABLE_SPACE.test(head) ? head.replace(/\s+/g, " ") : head).trim();
  return flat.length > max || cut ? `${cutChars(flat, max - 1)}…` : flat;
}

/**
 * The common finalize: the verdict by the written precedence (status, kind, message, retry time), the
 * summary's reply and usage (priced later, by the record). `rules` carries what a backend adds (gemini:
 * its exit codes).
 */
export function finalizeFromSummary(
  summary: StreamSummary,
  exit: ExitFacts,
  rules: JudgeRules = {},
): Outcome {
  const { status, failure } = judgeEnding(exit, summary, rules);
  return {
    status,
    // An empty reply (only narration before the last tool call) is no reply.
    reply: summary.reply === "" ? null : summary.reply,
    usage: accountsWithTotal(summary),
    error: failure === null ? null : { code: failure.code, message: failure.message },
    failure,
  };
}

function accountsWithTotal(summary: StreamSummary): Outcome["usage"] {
  const models = accounts(summary.usage);
  return { total: totalOf(models), models };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A thread check for CLIs whose session ids are UUIDs: null when `id` is one, else what is wrong. */
export function uuidThread(cli: string): (id: string) => string | null {
  return (id) =>
    UUID.test(id)
      ? null
      : `a ${cli} thread is a UUID such as 01a22d07-1915-73e1-aea5-ac3876195192, not ${JSON.stringify(oneLine(id, 80))}`;
}

/** The first string among `keys` of a tool's input. */
function firstString(input: Record<string, unknown> | null, keys: readonly string[]): string | null {
  if (input === null) return null;
  for (const key of keys) {
    const value = input[key];
    if (typeof value === "string" && value.length > 0) return value;
  }
  return null;
}

const PATH_KEYS = ["file_path", "filePath", "absolute_path", "notebook_path", "path"] as const;

/**
 * A short human label for a tool call, from its name and input, across the CLIs' vocabularies:
 * a shell command → "$ npm test", a file edit → "edit src/a.ts", a read → "read src/a.ts",
 * a search → "search TODO", a fetch → "fetch https://…"; otherwise the tool's name.
 */
export function describeToolCall(name: string, input: Record<string, unknown> | null): string {
  const command = firstString(input, ["command", "cmd"]);
  if (command !== null) return `$ ${oneLine(command)}`;
  const file = firstString(input, PATH_KEYS);
  if (file !== null && /edit|write|replace|patch/i.test(name)) return `edit ${oneLine(file)}`;
  if (file !== null && /read|view|list|ls/i.test(name)) return `read ${oneLine(file)}`;
  const query = firstString(input, ["pattern", "query"]);
  if (query !== null) return `search ${oneLine(query)}`;
  const url = firstString(input, ["url"]);
  if (url !== null) return `fetch ${oneLine(url)}`;
  const description = firstString(input, ["description", "prompt"]);
  if (description !== null) return `${name} ${oneLine(description)}`;
  return file !== null ? `${name} ${oneLine(file)}` : name;
}
