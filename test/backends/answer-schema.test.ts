import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import type { PlanRequest } from "../../src/backends/types.js";
import { type AnswerRequest, withAnswerContract } from "../../src/dispatch/request/answer-input.js";
import { ANSWER_CONTRACT_HEAD } from "../../src/domain/ending/answer-contract.js";
import type { BackendId } from "../../src/domain/vocab.js";

// How each CLI is given --answer-schema (specs/backends.md, "An answer that fits a schema"): Claude Code
// by --json-schema (the schema inline), codex by --output-schema (a file, also on `exec resume`), gemini
// and opencode by the contract appended to the brief.

const SCHEMA_TEXT = '{\n  "type": "object",\n  "required": ["a"]\n}\n';
const request = (backend: BackendId, more: Partial<PlanRequest> = {}): string[] =>
  backendFor(backend).plan({
    bin: `/bin/${backend}`,
    briefPath: "/d/brief.md",
    model: null,
    effort: null,
    access: null,
    thread: null,
    extraArgs: [],
    maxCostUsd: null,
    answerSchema: { path: "/d/answer-schema.json", text: SCHEMA_TEXT },
    ...more,
  }).args;

describe("each CLI's plan with an answer schema", () => {
  it("claude-code: --json-schema with the schema inline, on one line; on a resumed thread too", () => {
    expect(request("claude-code")).toEqual([
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--json-schema",
      '{"type":"object","required":["a"]}',
    ]);
    expect(request("claude-code", { thread: "016b7acb-4ab6-4408-8dff-07fb28bbfee3" })).toEqual(
      expect.arrayContaining(["--resume", "016b7acb-4ab6-4408-8dff-07fb28bbfee3", "--json-schema"]),
    );
  });

  it("codex: --output-schema with the folder's file, before the thread of `exec resume`", () => {
    expect(request("codex")).toEqual([
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--output-schema",
      "/d/answer-schema.json",
      "-",
    ]);
    expect(request("codex", { thread: "t-1" })).toEqual([
      "exec",
      "resume",
      "--json",
      "--skip-git-repo-check",
      "--output-schema",
      "/d/answer-schema.json",
      "t-1",
      "-",
    ]);
  });

  it("gemini and opencode: no flag (the contract is in the brief)", () => {
    for (const id of ["gemini", "opencode"] as const) {
      expect(request(id)).toEqual(request(id, { answerSchema: null }));
      expect(backendFor(id).answerSchemaFlag).toBe(false);
    }
    expect(backendFor("claude-code").answerSchemaFlag).toBe(true);
    expect(backendFor("codex").answerSchemaFlag).toBe(true);
  });
});

describe("the contract in the brief", () => {
  const answer: AnswerRequest = { schema: {}, text: SCHEMA_TEXT, repair: 1 };
  const brief = (text: string) => Buffer.from(text, "utf8");

  it("is appended after a blank line for gemini and opencode only, the schema with it", () => {
    const given = withAnswerContract(brief("Find the bug."), backendFor("gemini"), answer)?.toString("utf8");
    expect(given).toBe(`Find the bug.\n\n${ANSWER_CONTRACT_HEAD}\n\nJSON Schema:\n${SCHEMA_TEXT}`);
    const withNewline = withAnswerContract(brief("Find it.\n"), backendFor("opencode"), answer)?.toString(
      "utf8",
    );
    expect(withNewline).toBe(`Find it.\n\n${ANSWER_CONTRACT_HEAD}\n\nJSON Schema:\n${SCHEMA_TEXT}`);
    for (const id of ["claude-code", "codex"] as const) {
      expect(withAnswerContract(brief("Find it."), backendFor(id), answer)?.toString("utf8")).toBe(
        "Find it.",
      );
    }
    expect(withAnswerContract(brief("Find it."), backendFor("gemini"), null)?.toString("utf8")).toBe(
      "Find it.",
    );
  });
});

describe("Claude's structured answer in its stream", () => {
  const result = (more: Record<string, unknown>) =>
    JSON.stringify({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "",
      session_id: "s",
      ...more,
    });

  it("is carried on the final fact as `structured`, any JSON value, null included", () => {
    const claude = backendFor("claude-code");
    expect(claude.parse(result({ structured_output: { a: 1 } })).final).toEqual({
      isError: false,
      message: null,
      structured: { a: 1 },
    });
    expect(claude.parse(result({ structured_output: null })).final?.structured).toBeNull();
    expect(claude.parse(result({})).final).toEqual({ isError: false, message: null });
  });
});
