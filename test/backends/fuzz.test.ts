import { describe, expect, it } from "vitest";
import { allBackends } from "../../src/backends/backend-registry.js";
import { addFacts, emptySummary } from "../../src/domain/ending/summary.js";
import { accounts, TOKEN_FIELDS, totalOf } from "../../src/domain/spend/usage.js";
import { EXIT_REASONS } from "../../src/domain/vocab.js";
import { PROGRESS } from "../../src/domain/watch/facts.js";
import { initialWatch, observe } from "../../src/domain/watch/watch.js";
import { Fuzzer, soundOutcome, wellFormed } from "../faults/fuzz.js";

// The fault suite's fuzzer, a few thousand lines, in the unit gate: every recorded line of every CLI
// (failures included) mutated, torn and mixed with the failure shapes, through parse, parseStderr,
// the summary, the watch and finalize.

const LINES = 4000;

describe("fuzzed lines through every backend", () => {
  for (const backend of allBackends()) {
    it(`${backend.id}: parse and parseStderr never throw and say only sound facts; finalize stays sound`, () => {
      const fuzz = new Fuzzer(20_261_130 + backend.id.length);
      const summary = emptySummary();
      let watch = initialWatch(0);
      const problems: string[] = [];
      let before = totalOf(accounts(summary.usage));
      for (let i = 0; i < LINES; i++) {
        const line = i % 3 === 0 ? fuzz.usageMutated() : fuzz.lineText();
        const logged = backend.usageLog?.parse(line)?.facts;
        const all = [backend.parse(line), (backend.parseStderr ?? (() => PROGRESS))(line)];
        for (const facts of logged === undefined ? all : [...all, { progress: false, ...logged }]) {
          const problem = wellFormed(facts);
          if (problem !== null) problems.push(`${problem}: ${line.slice(0, 120)}`);
          addFacts(summary, facts);
          watch = observe(watch, facts, i);
        }
        // Usage never goes negative, and a total never decreases (the stream alone is one source).
        const now = totalOf(accounts(summary.usage));
        for (const key of TOKEN_FIELDS) {
          if (now[key] < 0) problems.push(`${key} negative after: ${line.slice(0, 120)}`);
          if (logged === undefined && now[key] < before[key])
            problems.push(`${key} decreased ${before[key]} → ${now[key]} after: ${line.slice(0, 120)}`);
        }
        before = now;
      }
      expect(problems.slice(0, 5)).toEqual([]);
      if (backend.id !== "exec") expect(summary.usageIgnored).toBeGreaterThan(0);
      for (const reason of EXIT_REASONS) {
        for (const code of [0, 1, 145, 173, null]) {
          const outcome = backend.finalize(summary, { reason, code, signal: null, endedAtMs: 0 });
          expect(soundOutcome(outcome)).toBeNull();
        }
      }
    });
  }
});
