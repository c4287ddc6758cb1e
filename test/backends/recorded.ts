import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Backend, Outcome, PlanRequest } from "../../src/backends/types.js";
import { defaultStallMs, SPEC_DEFAULTS } from "../../src/domain/defaults.js";
import type { ExitFacts } from "../../src/domain/ending/ending.js";
import { addFacts, emptySummary, type StreamSummary } from "../../src/domain/ending/summary.js";
import {
  type CostSource,
  type TokenCounts,
  type UsageReport,
  ZERO_COUNTS,
} from "../../src/domain/spend/usage.js";
import type { ErrorKind, ExitReason } from "../../src/domain/vocab.js";
import type { Tokens } from "../../src/domain/watch/facts.js";
import { type LineFacts, PROGRESS } from "../../src/domain/watch/facts.js";
import {
  decide,
  initialWatch,
  nextDeadline,
  observe,
  type WatchLimits,
} from "../../src/domain/watch/watch.js";
import { billingOf, pricedUsage } from "../../src/folder/spend.js";
import { loadPricer } from "../../src/infra/prices.js";

// Recorded streams of the real CLIs (test/fixtures/recorded/<cli>/) and the
// folds the record makes of them: stdout through parse, then stderr through parseStderr.

const ROOT = fileURLToPath(new URL("../fixtures/recorded/", import.meta.url));

export interface Recording {
  stdout: string[];
  stderr: string[];
  /** When each line appeared (ms since the spawn), stdout and stderr interleaved as they were printed. */
  timing: { ms: number; stream: "stdout" | "stderr" }[];
  meta: {
    scenario: string;
    args: string[];
    env_added: Record<string, string>;
    exit_code: number | null;
    signal: string | null;
    /** Set when the recording run ended the CLI from outside (it would have gone on). */
    killed_by_runner: string | null;
    wall_ms: number | null;
  };
}

function lines(text: string): string[] {
  const all = text.split("\n");
  if (all.at(-1) === "") all.pop();
  return all;
}

/** One recorded run: `cli` is the fixture folder (claude, codex, gemini, opencode). */
export function recording(cli: string, scenario: string): Recording {
  const read = (ext: string) => readFileSync(path.join(ROOT, cli, `${scenario}${ext}`), "utf8");
  return {
    stdout: lines(read(".jsonl")),
    stderr: lines(read(".stderr")),
    timing: lines(read(".timing.jsonl"))
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l)),
    meta: JSON.parse(read(".meta.json")),
  };
}

/** Every scenario recorded for a CLI, sorted. */
export function scenarios(cli: string): string[] {
  return readdirSync(path.join(ROOT, cli))
    .filter((f) => f.endsWith(".meta.json"))
    .map((f) => f.slice(0, -".meta.json".length))
    .sort();
}

/** The facts of each stdout line. */
export function stdoutFacts(backend: Backend, rec: Recording): LineFacts[] {
  return rec.stdout.map((line) => backend.parse(line));
}

/** The first stdout line's facts that satisfy `pick`. */
export function firstFacts(backend: Backend, rec: Recording, pick: (f: LineFacts) => boolean): LineFacts {
  const found = stdoutFacts(backend, rec).find(pick);
  if (found === undefined) throw new Error("no line matched");
  return found;
}

export function summarize(backend: Backend, rec: Recording): StreamSummary {
  const summary = emptySummary();
  for (const line of rec.stdout) addFacts(summary, backend.parse(line));
  const parseStderr = backend.parseStderr ?? (() => PROGRESS);
  for (const line of rec.stderr) addFacts(summary, parseStderr(line));
  return summary;
}

/** The record of a whole dispatch, as if it ended for `reason` with the recorded exit code and signal. */
export function outcome(backend: Backend, rec: Recording, reason: ExitReason = "exited"): Outcome {
  return backend.finalize(summarize(backend, rec), {
    reason,
    code: rec.meta.exit_code,
    signal: rec.meta.signal,
  });
}

/** The record's usage and cost of a recorded run: priced as record.ts prices, billed by its command line. */
export async function recordedSpend(backend: Backend, rec: Recording, got: Outcome) {
  const billing = billingOf(backend, { args: rec.meta.args, env: rec.meta.env_added }, {});
  return pricedUsage(got.usage.models, billing, await loadPricer(), new Date("2026-11-29T00:00:00Z"));
}

/** A usage report of one model as a backend's parse gives it: counts not named are 0. */
export function oneUse(
  scope: UsageReport["scope"],
  counts: Partial<TokenCounts>,
  options: { model?: string | null; costUsd?: number | null; key?: string | null } = {},
): UsageReport {
  return {
    scope,
    key: options.key ?? null,
    uses: [
      {
        model: options.model ?? null,
        tokens: { ...ZERO_COUNTS, ...counts },
        costUsd: options.costUsd ?? null,
      },
    ],
  };
}

/** The limits a supervisor watches a backend's run with, by default. */
export function defaultLimits(backend: Backend): WatchLimits {
  return {
    idleMs: backend.defaults.idleMs,
    wallMs: backend.defaults.wallMs,
    stallMs: defaultStallMs(backend.defaults.idleMs),
    graceAfterFinalMs: backend.defaults.graceAfterFinalMs,
    retryAttempts: SPEC_DEFAULTS.providerRetry.attempts,
    retryWindowMs: SPEC_DEFAULTS.providerRetry.windowMs,
  };
}

/** How a supervisor would have ended a recorded run: its exit reason, kind, and when (ms since spawn). */
export interface SupervisedEnd {
  reason: ExitReason;
  errorKind: ErrorKind | null;
  atMs: number;
}

/**
 * Replays a recording through the supervisor's pure rules, each line at the time it was printed (stdout
 * and stderr interleaved by the timing file), deciding after every line and at every deadline between, as
 * the loop does. A run the recorder ended from outside goes on silently until the rules end it.
 */
export function superviseRecording(backend: Backend, rec: Recording, limits = defaultLimits(backend)) {
  const quiet = { exited: false, cancelRequested: false };
  const events: { ms: number; facts: LineFacts }[] = [];
  const next = { stdout: 0, stderr: 0 };
  const parseStderr = backend.parseStderr ?? (() => PROGRESS);
  const endMs = rec.meta.wall_ms ?? rec.timing.at(-1)?.ms ?? 0;
  for (const { ms, stream } of rec.timing) {
    const line = rec[stream][next[stream]++];
    if (line !== undefined)
      events.push({ ms, facts: stream === "stdout" ? backend.parse(line) : parseStderr(line) });
  }
  // A last line without a newline has no timing of its own: it came at the end.
  for (const stream of ["stdout", "stderr"] as const) {
    for (const line of rec[stream].slice(next[stream])) {
      events.push({ ms: endMs, facts: stream === "stdout" ? backend.parse(line) : parseStderr(line) });
    }
  }
  let state = initialWatch(0);
  const until = (ms: number): SupervisedEnd | null => {
    for (let due = nextDeadline(state, limits); due <= ms; due = nextDeadline(state, limits)) {
      const judged = decide(state, quiet, limits, due);
      if (judged.verdict.kind === "stop") return { ...judged.verdict, atMs: due };
      state = judged.state;
    }
    return null;
  };
  for (const { ms, facts } of events) {
    const early = until(ms);
    if (early !== null) return early;
    state = observe(state, facts, ms);
    const judged = decide(state, quiet, limits, ms);
    if (judged.verdict.kind === "stop") return { ...judged.verdict, atMs: ms };
    state = judged.state;
  }
  if (rec.meta.killed_by_runner === null) {
    const early = until(endMs);
    if (early !== null) return early;
    const exited = decide(state, { exited: true, cancelRequested: false }, limits, endMs).verdict;
    if (exited.kind === "stop") return { ...exited, atMs: endMs };
  }
  const late = until(limits.wallMs);
  if (late === null) throw new Error("the rules never ended the dispatch");
  return late;
}

/**
 * The record of a recorded run as the supervisor would have made it: ended by the rules, with the
 * recorded exit code when the CLI exited by itself, SIGTERM when catherd stopped it.
 */
export function supervisedOutcome(
  backend: Backend,
  rec: Recording,
): { end: SupervisedEnd; outcome: Outcome } {
  const end = superviseRecording(backend, rec);
  const limits = { idleMs: backend.defaults.idleMs, wallMs: backend.defaults.wallMs };
  const exit: ExitFacts =
    end.reason === "exited"
      ? { reason: end.reason, code: rec.meta.exit_code, signal: rec.meta.signal, kind: end.errorKind, limits }
      : { reason: end.reason, code: null, signal: "SIGTERM", kind: end.errorKind, limits };
  return { end, outcome: backend.finalize(summarize(backend, rec), exit) };
}

/** Tool calls still open after the whole stream, by opening and closing ids as the supervisor does. */
export function leftOpen(backend: Backend, rec: Recording): string[] {
  const open = new Set<string>();
  for (const facts of stdoutFacts(backend, rec)) {
    for (const tool of facts.toolsOpened ?? []) open.add(tool.id);
    for (const id of facts.toolsClosed ?? []) open.delete(id);
  }
  return [...open];
}

/** Every tool call opened in the stream, in order. */
export function opened(backend: Backend, rec: Recording): { id: string; label: string }[] {
  return stdoutFacts(backend, rec).flatMap((f) => [...(f.toolsOpened ?? [])]);
}

export const BRIEF_PATH = "/srv/dispatch/brief.md";

export function planRequest(overrides: Partial<PlanRequest> = {}): PlanRequest {
  return {
    bin: "/opt/bin/agent",
    briefPath: BRIEF_PATH,
    model: null,
    effort: null,
    access: null,
    thread: null,
    extraArgs: [],
    maxCostUsd: null,
    ...overrides,
  };
}

/** Odd lines: each must parse without a throw and count as progress. */
export const ODD_LINES = [
  "",
  "not json at all",
  '{"type":"assistant","message":{"content":[{"type":"tool_u',
  "[]",
  "null",
  "42",
  '{"type":"something-new","payload":{}}',
  '{"type":null}',
  '{"type":"result"}',
  '{"type":"assistant","message":null}',
  '{"type":"user","message":{"content":"plain text"}}',
  '{"type":"tool_use"}',
  '{"type":"step_finish","part":null}',
  '{"type":"item.completed","item":7}',
] as const;

/** What the record of one recorded stream must say, once the supervisor's rules have ended it. */
export interface Expected {
  /** How the supervisor ends the dispatch, and about when (seconds since the spawn, to 0.1 s). */
  ends: ExitReason;
  at: number;
  status: Outcome["status"];
  /** The error kind, or null when the dispatch succeeded. */
  kind: ErrorKind | null;
  /** record.json's tokens, usage by model (each model's dollars), cost and where the cost comes from. */
  tokens: Tokens;
  models: Record<string, number | null>;
  costUsd: number | null;
  costSource: CostSource | null;
  reply: string | null;
  /** The error message, or null when the dispatch succeeded. */
  error: string | null;
  /** When to come back (ISO), or null. */
  retryAfter?: string | null;
}

/**
 * The behaviour every backend shares over its recordings: one expected record per recorded stream (and
 * no stream without one), replayed through the supervisor's rules with its timing; the exit reason
 * deciding before anything the CLI printed; odd lines as progress.
 */
export function describeRecordings(backend: Backend, cli: string, expected: Record<string, Expected>): void {
  describe(`${backend.id} over every stream recorded from ${cli}`, () => {
    it("has an expected record for every recorded stream", () => {
      expect(Object.keys(expected).sort()).toEqual(scenarios(cli));
    });

    it.each(Object.entries(expected))(
      "ends the %s stream as the supervisor would, with its status, kind, message, retry time, usage, cost and reply",
      async (scenario, want) => {
        const rec = recording(cli, scenario);
        const { end, outcome: got } = supervisedOutcome(backend, rec);
        const spend = await recordedSpend(backend, rec, got);
        expect({
          ends: end.reason,
          at: Math.round(end.atMs / 100) / 10,
          status: got.status,
          kind: got.failure?.kind ?? null,
          tokens: spend.tokens,
          models: Object.fromEntries(spend.usage.models.map((m) => [m.model ?? "(unknown)", m.costUsd])),
          costUsd: spend.costUsd,
          costSource: spend.costSource,
          reply: got.reply,
          error: got.failure?.message ?? null,
          retryAfter: got.failure?.retryAfter ?? null,
        }).toEqual({ retryAfter: null, ...want });
        expect(got.error).toEqual(
          got.failure === null ? null : { code: end.reason, message: got.failure.message },
        );
      },
    );

    it.each(scenarios(cli))("records the %s stream as timeout when the wall limit ended it", (scenario) => {
      const got = outcome(backend, recording(cli, scenario), "wall-timeout");
      expect(got.status).toBe("timeout");
      expect(got.failure?.kind).toBe("timeout");
      expect(got.error?.code).toBe("wall-timeout");
    });

    it.each(scenarios(cli))(
      "records the %s stream, ended as provider-unavailable by a supervisor that named no kind, with its last retry's kind, else its last error's, else provider-down",
      (scenario) => {
        const summary = summarize(backend, recording(cli, scenario));
        const got = backend.finalize(summary, {
          reason: "provider-unavailable",
          code: null,
          signal: "SIGTERM",
        });
        expect(got.failure?.kind).toBe(
          summary.lastRetry?.kind ?? summary.lastKnownError?.kind ?? "provider-down",
        );
      },
    );

    it.each(ODD_LINES)("treats the odd line %j as progress without throwing", (line) => {
      expect(backend.parse(line).progress).toBe(true);
    });
  });
}
