import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isolatedHome, json, runCli } from "../helpers/cli.js";
import { calls, type FakeRun, fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";

// The draft an answer schema is written in (specs/dispatch.md, "An answer that fits a schema"): draft-07,
// the draft most tools write, is checked as draft-07 at admission and by the record writer alike; a draft
// catherd does not check is refused in catherd's words, naming those it does. Real processes, a fake codex.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

/** A draft-07 schema, in draft-07's own words: `definitions`, and `items` as a tuple. */
const DRAFT_07 = {
  $schema: "http://json-schema.org/draft-07/schema#",
  definitions: { count: { type: "integer", minimum: 0 } },
  type: "object",
  properties: {
    count: { $ref: "#/definitions/count" },
    pair: { type: "array", items: [{ type: "string" }, { type: "number" }] },
  },
  required: ["count", "pair"],
};

/** The codex recording of a plain answer, its final message replaced by `text`. */
function codexSaying(text: string): FakeRun {
  const lines = recordedLines("codex", "text").map((l) =>
    l.replace('"text":"Hello from mockllm."', `"text":${JSON.stringify(text)}`),
  );
  return { lines, exit: 0 };
}

function codexWith(runs: FakeRun[], schema: unknown) {
  const { home, env: base } = isolatedHome();
  const bins = tempDir();
  const codex = fakeCli(bins, "codex", runs);
  const schemaFile = path.join(bins, "answer.schema.json");
  fs.writeFileSync(schemaFile, JSON.stringify(schema, null, 2));
  return { home, bins, schemaFile, env: { ...base, CATHERD_CODEX_BIN: codex } };
}

describe("an answer schema's draft", () => {
  it("takes a draft-07 schema and records the answer that fits it as draft-07 reads it", async () => {
    const { schemaFile, env } = codexWith([codexSaying('{"count": 2, "pair": ["a", 1]}')], DRAFT_07);
    const started = await runCli(
      [
        "dispatch",
        "--backend",
        "codex",
        "--name",
        "d7",
        "--brief",
        "b",
        "--answer-schema",
        schemaFile,
        "--json",
      ],
      { env },
    );
    expect(started.code, started.stderr).toBe(0);
    dispatched.push(json<{ dispatched: { dispatchId: string } }>(started).dispatched.dispatchId);
    const waited = await runCli(["wait", "d7", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    expect(json<{ records: Record<string, unknown>[] }>(waited).records[0]).toMatchObject({
      status: "ok",
      answer: { count: 2, pair: ["a", 1] },
      answerErrors: null,
    });
  });

  it("holds a draft-07 answer to draft-07's tuple and repairs one that breaks it", async () => {
    // Under 2020-12 an items array is no schema; under draft-07 it makes /pair/1 a number.
    const { schemaFile, env } = codexWith(
      [codexSaying('{"count": 2, "pair": ["a", "b"]}'), codexSaying('{"count": 2, "pair": ["a", 3]}')],
      DRAFT_07,
    );
    const started = await runCli(
      [
        "dispatch",
        "--backend",
        "codex",
        "--name",
        "d7r",
        "--brief",
        "b",
        "--answer-schema",
        schemaFile,
        "--json",
      ],
      { env },
    );
    expect(started.code, started.stderr).toBe(0);
    dispatched.push(json<{ dispatched: { dispatchId: string } }>(started).dispatched.dispatchId);
    const waited = await runCli(["wait", "d7r", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    expect(json<{ records: Record<string, unknown>[] }>(waited).records[0]).toMatchObject({
      status: "ok",
      attempt: 2,
      answer: { count: 2, pair: ["a", 3] },
    });
    const full = json<{ attempts: { dispatchId: string; dir: string }[] }>(
      await runCli(["result", "d7r", "--json"], { env }),
    );
    for (const a of full.attempts) dispatched.push(a.dispatchId);
    const first = JSON.parse(fs.readFileSync(path.join(full.attempts[0]?.dir ?? "", "record.json"), "utf8"));
    expect(first.answerErrors).toEqual([{ path: "/pair/1", message: "must be number" }]);
  });

  it("refuses a draft it does not check in its own words, naming the drafts it does, writing nothing", async () => {
    const { home, bins, schemaFile, env } = codexWith([], {
      $schema: "http://json-schema.org/draft-04/schema#",
      type: "object",
    });
    const r = await runCli(
      ["dispatch", "--backend", "codex", "--brief", "b", "--answer-schema", schemaFile, "--json"],
      { env },
    );
    expect(r.code).toBe(2);
    const error = json<{ error: { code: string; message: string; fix: string } }>(r).error;
    expect(error.code).toBe("E_INPUT_INVALID");
    expect(error.message).toBe(
      `--answer-schema ${schemaFile} names $schema "http://json-schema.org/draft-04/schema#", a draft of JSON Schema catherd does not check`,
    );
    for (const draft of ["draft 2020-12", "draft 2019-09", "draft-07"]) expect(error.fix).toContain(draft);
    expect(`${error.message} ${error.fix}`).not.toMatch(/no schema with key or ref/);
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
    expect(calls(bins, "codex")).toHaveLength(0);
  });
});
