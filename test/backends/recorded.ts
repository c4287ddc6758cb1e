import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { Backend, Outcome, PlanRequest } from "../../src/backends/types.js";
import { type LineFacts, PROGRESS } from "../../src/domain/facts.js";
import { addFacts, emptySummary, type StreamSummary } from "../../src/domain/summary.js";
import type { ExitReason } from "../../src/domain/vocab.js";

// Recorded streams of the real CLIs (copied from shared/fixtures into test/fixtures/recorded) and the
// folds the record makes of them: stdout through parse, then stderr through parseStderr.

const ROOT = fileURLToPath(new URL("../fixtures/recorded/", import.meta.url));

export interface Recording {
  stdout: string[];
  stderr: string[];
  meta: { scenario: string; exit_code: number | null; signal: string | null };
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

/** What the record of one recorded stream must say. */
export interface Expected {
  status: Outcome["status"];
  tokens: Outcome["tokens"];
  costUsd: number | null;
  reply: string | null;
  /** The error message, or null when the run succeeded. */
  error: string | null;
}

/**
 * The behaviour every backend shares over its recordings: one expected record per recorded stream (and
 * no stream without one), the exit reason deciding before anything the CLI printed, odd lines as progress.
 */
export function describeRecordings(backend: Backend, cli: string, expected: Record<string, Expected>): void {
  describe(`${backend.id} over every stream recorded from ${cli}`, () => {
    it("has an expected record for every recorded stream", () => {
      expect(Object.keys(expected).sort()).toEqual(scenarios(cli));
    });

    it.each(Object.entries(expected))(
      "records the %s stream with its status, tokens, cost, reply and error",
      (scenario, want) => {
        const got = outcome(backend, recording(cli, scenario));
        expect({ ...got, error: got.error?.message ?? null }).toEqual(want);
        if (want.status !== "ok") expect(got.error?.code).toBe("exited");
      },
    );

    it.each(scenarios(cli))("records the %s stream as timeout when the wall limit ended it", (scenario) => {
      const got = outcome(backend, recording(cli, scenario), "wall-timeout");
      expect(got.status).toBe("timeout");
      expect(got.error?.code).toBe("wall-timeout");
    });

    it.each(scenarios(cli))(
      "records the %s stream as limit when the provider was unavailable",
      (scenario) => {
        expect(outcome(backend, recording(cli, scenario), "provider-unavailable").status).toBe("limit");
      },
    );

    it.each(ODD_LINES)("treats the odd line %j as progress without throwing", (line) => {
      expect(backend.parse(line).progress).toBe(true);
    });
  });
}
