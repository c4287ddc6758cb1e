import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import { resumeProblem } from "../../src/backends/resume.js";
import type { BackendId } from "../../src/domain/vocab.js";

// The one check of a thread a turn's CLI named, asked by a follow-up and by a repair turn alike: in the
// turn's words, never in those of a flag nobody gave.

describe("resumeProblem", () => {
  const rows: [BackendId, string | null, string | null][] = [
    ["codex", "01a2264d-a96b-7c23-b4e9-0484292c91b3", null],
    ["claude-code", "5f8e2b1a-7c3d-4e9f-8a2b-1c0d9e8f7a6b", null],
    ["opencode", "ses_dd2f8c1b9ffe61TIhHsywNFVw1", null],
    ["codex", null, "its CLI never named its thread"],
    [
      "codex",
      "demo-4242",
      'its CLI named a thread codex cannot resume (a codex thread is a UUID such as 01a22d07-1915-73e1-aea5-ac3876195192, not "demo-4242")',
    ],
    ["gemini", "latest", "its CLI named a thread gemini cannot resume (a gemini thread is a UUID"],
    ["opencode", "01a2264d-a96b-7c23-b4e9-0484292c91b3", "its CLI named a thread opencode cannot resume"],
    ["exec", null, "exec has no thread to continue"],
  ];
  it.each(rows)("on %s, thread %j: %j", (backend, thread, words) => {
    const problem = resumeProblem(backendFor(backend), thread);
    if (words === null) expect(problem).toBeNull();
    else expect(problem).toContain(words);
    expect(problem ?? "").not.toContain("--thread");
  });
});
