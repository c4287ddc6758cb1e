import { describe, expect, it } from "vitest";
import { claudeCodeBackend } from "../../src/backends/claude-code.js";
import { codexBackend } from "../../src/backends/codex.js";
import { geminiBackend } from "../../src/backends/gemini.js";
import { opencodeBackend } from "../../src/backends/opencode.js";
import type { Backend } from "../../src/backends/types.js";
import { OUTCOME_CONTRACT, withOutcomeContract } from "../../src/dispatch/request/outcome-contract.js";
import {
  type DeclaredOutcome,
  declaredOutcome,
  MAX_WHY_CHARS,
  outcomeText,
} from "../../src/domain/ending/declared-outcome.js";
import { outcome, recording } from "../backends/recorded.js";

// The declared outcome line (specs/record.md, "outcome"), as a table: where it stands in the final
// message, the Markdown around it, its separators, its case, and the lines that are not one.

const said = (status: DeclaredOutcome["status"], why = ""): DeclaredOutcome => ({ status, why });

describe("declaredOutcome", () => {
  const cases: [string, string | null, DeclaredOutcome | null][] = [
    [
      "the last line",
      "Fixed the test.\n\nSTATUS: complete — npm test passes",
      said("complete", "npm test passes"),
    ],
    [
      "the first line",
      "STATUS: partial — two of three done\n\nDetails follow.",
      said("partial", "two of three done"),
    ],
    ["the only line, no why", "STATUS: blocked", said("blocked")],
    [
      "a plain hyphen",
      "STATUS: refused - it would delete the data",
      said("refused", "it would delete the data"),
    ],
    ["a double hyphen", "STATUS: partial -- half", said("partial", "half")],
    ["an en dash", "STATUS: complete – done", said("complete", "done")],
    ["a colon", "STATUS: blocked: no API key", said("blocked", "no API key")],
    ["no spaces", "STATUS:complete—done", said("complete", "done")],
    ["lower case", "status: complete — done", said("complete", "done")],
    ["the status in capitals", "Status: BLOCKED — no key", said("blocked", "no key")],
    ["stray whitespace", "   STATUS :   partial   —   half done   ", said("partial", "half done")],
    ["a trailing carriage return", "done\r\nSTATUS: complete — ok\r\n", said("complete", "ok")],
    ["a full stop after the status", "STATUS: complete.", said("complete")],
    ["the why keeps its own full stop", "STATUS: complete — all done.", said("complete", "all done.")],
    ["bold label", "**STATUS:** blocked — no network", said("blocked", "no network")],
    ["bold label and status", "**STATUS: blocked** — no network", said("blocked", "no network")],
    ["the whole line bold", "**STATUS: refused — unsafe**", said("refused", "unsafe")],
    ["the whole line in code", "`STATUS: partial - half`", said("partial", "half")],
    ["italic label", "_STATUS_: complete — ok", said("complete", "ok")],
    ["a list item", "Summary:\n- STATUS: complete — shipped", said("complete", "shipped")],
    ["a numbered item", "1. STATUS: partial — one left", said("partial", "one left")],
    ["a quote", "> STATUS: blocked — waiting for review", said("blocked", "waiting for review")],
    ["a heading", "## STATUS: complete — done", said("complete", "done")],
    ["inside a code fence", "Here it is:\n```\nSTATUS: complete — fenced\n```\n", said("complete", "fenced")],
    [
      "given twice: the last wins",
      "STATUS: blocked — no key\n\nFound the key after all.\n\nSTATUS: complete — done",
      said("complete", "done"),
    ],
    ["a why with dashes of its own", "STATUS: partial — a - b — c", said("partial", "a - b — c")],
    [
      "a why with emphasis inside",
      "STATUS: blocked — needs **admin** rights",
      said("blocked", "needs **admin** rights"),
    ],
    [
      "a why made inert: no escape sequence, no NUL",
      "STATUS: blocked — \u001b[31mred\u001b[0m and \u0000nul",
      said("blocked", "red and \ufffdnul"),
    ],
    ["missing", "All done, tests pass.", null],
    ["no reply", null, null],
    ["an empty reply", "", null],
    ["the contract's template echoed", "STATUS: complete | partial | blocked | refused — why", null],
    ["the contract's form echoed", "STATUS: <complete|partial|blocked|refused> — <why>", null],
    ["an unknown status", "STATUS: done — ok", null],
    ["a longer word", "STATUS: completed — ok", null],
    ["words after the status without a separator", "STATUS: complete all good", null],
    ["STATUS in the middle of a sentence", "I will write STATUS: complete — ok at the end", null],
    ["the word alone", "Status", null],
  ];
  for (const [what, reply, expected] of cases) {
    it(what, () => expect(declaredOutcome(reply)).toEqual(expected));
  }

  it("cuts a why longer than it keeps", () => {
    const got = declaredOutcome(`STATUS: partial — ${"x".repeat(2 * MAX_WHY_CHARS)}`);
    expect(got?.why.length).toBe(MAX_WHY_CHARS);
    expect(got?.why.endsWith("…")).toBe(true);
  });

  it("says the outcome in one line", () => {
    expect(outcomeText(said("blocked", "no key"))).toBe("blocked — no key");
    expect(outcomeText(said("complete"))).toBe("complete");
  });
});

/**
 * A recorded run of a CLI whose final text is `text`: the recording's own final text replaced, in the
 * JSON of each line that carries it (gemini's answer comes in deltas: the last delta carries it).
 */
function replyOf(backend: Backend, cli: string, final: string, text: string): string | null {
  const rec = recording(cli, "text");
  const escaped = JSON.stringify(text).slice(1, -1);
  const stdout = rec.stdout.map((line) => line.split(JSON.stringify(final).slice(1, -1)).join(escaped));
  expect(stdout).not.toEqual(rec.stdout);
  return outcome(backend, { ...rec, stdout }).reply;
}

describe("the outcome line in each CLI's final message", () => {
  const ending = "Fixed it.\n\n**STATUS:** partial — the docs are left";
  const clis: [string, Backend, string][] = [
    ["claude", claudeCodeBackend, "Hello from mockllm."],
    ["codex", codexBackend, "Hello from mockllm."],
    // gemini streams its answer in deltas ("Hello ", "from ", "mockllm."): the line comes in the last.
    ["gemini", geminiBackend, "mockllm."],
    ["opencode", opencodeBackend, "Hello from mockllm."],
  ];
  for (const [cli, backend, final] of clis) {
    it(`${cli}: read from the record's reply`, () => {
      const reply = replyOf(backend, cli, final, ending);
      expect(reply).toContain("STATUS");
      expect(declaredOutcome(reply)).toEqual(said("partial", "the docs are left"));
    });
    it(`${cli}: a final message without the line has none`, () => {
      expect(declaredOutcome(replyOf(backend, cli, final, "Fixed it, all good."))).toBeNull();
    });
  }
});

describe("the contract --outcome adds to the brief", () => {
  it("comes after the brief's own bytes, a blank line between, and names every status", () => {
    const brief = Buffer.from("Make npm test pass.");
    expect(withOutcomeContract(brief, true, "codex")?.toString()).toBe(
      `Make npm test pass.\n\n${OUTCOME_CONTRACT}\n`,
    );
    expect(withOutcomeContract(Buffer.from("Brief.\n"), true, "codex")?.toString()).toBe(
      `Brief.\n\n${OUTCOME_CONTRACT}\n`,
    );
    for (const status of ["complete", "partial", "blocked", "refused"])
      expect(OUTCOME_CONTRACT).toContain(status);
    expect(OUTCOME_CONTRACT).toContain("STATUS: ");
  });

  it("leaves the brief as it is when not asked", () => {
    const brief = Buffer.from("Make npm test pass.");
    expect(withOutcomeContract(brief, false, "codex")).toBe(brief);
  });

  it("is refused for exec", () => {
    expect(() => withOutcomeContract(null, true, "exec")).toThrow(/--outcome asks an agent/);
  });

  it("is no outcome line itself: a worker that echoes it declares nothing", () => {
    expect(declaredOutcome(OUTCOME_CONTRACT)).toBeNull();
  });
});
