import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CliResult, isolatedHome, json, runCli } from "../helpers/cli.js";
import { calls, type FakeRun, fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";

// A dispatch is always recorded, whatever its agent answers (specs/record.md, "The answer" and "A record
// always comes"): answers deeper, longer or slower to check than catherd takes, through the real CLI and
// supervisor, with a fake codex (and claude) printing what the real ones print.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

type Recorded = Record<string, unknown> & { error: { kind: string; message: string } | null };

/** The codex recording of a plain answer, its final message replaced by `text`. */
function codexSaying(text: string): FakeRun {
  const lines = recordedLines("codex", "text").map((l) =>
    l.replace('"text":"Hello from mockllm."', `"text":${JSON.stringify(text)}`),
  );
  return { lines, exit: 0 };
}

/** Dispatches a fake CLI that plays `run` with `schema` as --answer-schema (one repair left), and waits. */
async function answered(
  cli: "codex" | "claude",
  run: FakeRun,
  schema: unknown,
): Promise<{ record: Recorded; bins: string; waited: CliResult }> {
  const { env: base } = isolatedHome();
  const bins = tempDir();
  const bin = fakeCli(bins, cli, [run]);
  const schemaFile = path.join(bins, "answer.schema.json");
  fs.writeFileSync(schemaFile, JSON.stringify(schema));
  const env = { ...base, [cli === "codex" ? "CATHERD_CODEX_BIN" : "CATHERD_CLAUDE_BIN"]: bin };
  const backend = cli === "codex" ? "codex" : "claude-code";
  const started = await runCli(
    [
      "dispatch",
      "--backend",
      backend,
      "--name",
      "a",
      "--brief",
      "b",
      "--answer-schema",
      schemaFile,
      "--json",
    ],
    { env },
  );
  dispatched.push(json<{ dispatched: { dispatchId: string } }>(started).dispatched.dispatchId);
  const waited = await runCli(["wait", "a", "--json", "--timeout", "40s"], { env, timeoutMs: 60_000 });
  const records = json<{ records: Recorded[] }>(waited).records;
  expect(records, waited.stdout.slice(0, 2000) + waited.stderr).toHaveLength(1);
  return { record: records[0] as Recorded, bins, waited };
}

const OBJECT = { type: "object" };

/** `{"c":{"c":…1…}}`, `levels` deep, as text. */
function nestedText(levels: number): string {
  return `${'{"c":'.repeat(levels)}1${"}".repeat(levels)}`;
}

describe("a dispatch is always recorded, whatever its agent answers", () => {
  it("records an answer nested 20,000 deep as over catherd's depth limit, without a repair", async () => {
    const { record, bins, waited } = await answered("codex", codexSaying(nestedText(20_000)), OBJECT);
    expect(waited.code).toBe(1);
    expect(record).toMatchObject({
      status: "failed",
      answer: null,
      answerErrors: [
        { path: "", message: expect.stringMatching(/deeper than catherd's limit of 64 levels/) },
      ],
      error: { code: "exited", kind: "answer-over-limit" },
      next: null,
    });
    expect(record.error?.message).toMatch(/^the answer is over catherd's limits: .*no repair turn follows/);
    expect(calls(bins, "codex")).toHaveLength(1);
  });

  it("records a structured answer nested 20,000 deep (Claude Code's structured_output) the same way", async () => {
    const lines = recordedLines("claude", "text").map((l) =>
      l.startsWith('{"type":"result"') ? `{"structured_output":${nestedText(20_000)},${l.slice(1)}` : l,
    );
    const { record } = await answered("claude", { lines, exit: 0 }, OBJECT);
    expect(record).toMatchObject({ status: "failed", error: { kind: "answer-over-limit" }, next: null });
    expect(record.error?.message).toMatch(/deeper than catherd's limit of 64 levels/);
  });

  it("checks a pattern in time linear in the answer: ^(a+)+$ against 40 characters is recorded at once", async () => {
    const { record } = await answered("codex", codexSaying(JSON.stringify(`${"a".repeat(40)}!`)), {
      type: "string",
      pattern: "^(a+)+$",
    });
    expect(record).toMatchObject({
      status: "failed",
      answerErrors: [{ path: "", message: 'must match pattern "^(a+)+$"' }],
      error: { kind: "answer-invalid" },
    });
  });

  it("says a valid answer of 10 MB is over catherd's limit of 1,000,000 characters, and asks no repair", async () => {
    const big = JSON.stringify({ x: "y".repeat(10_000_000) });
    const { record, bins } = await answered("codex", codexSaying(big), OBJECT);
    expect(record).toMatchObject({ status: "failed", error: { kind: "answer-over-limit" }, next: null });
    expect(record.error?.message).toMatch(
      /the final message is over catherd's limit of 1,000,000 characters: catherd kept only its start/,
    );
    expect(record.error?.message).not.toMatch(/not JSON/);
    expect(calls(bins, "codex")).toHaveLength(1);
  });

  it("says an answer in a 24 MB line is over catherd's line limit, not an empty message", async () => {
    const big = JSON.stringify({ x: "y".repeat(24 * 1024 * 1024) });
    const { record, bins } = await answered("codex", codexSaying(big), OBJECT);
    expect(record).toMatchObject({ status: "failed", error: { kind: "answer-over-limit" }, next: null });
    expect(record.error?.message).toMatch(
      /a line of the CLI's output was over catherd's limit of 16 MiB a line/,
    );
    expect(record.error?.message).not.toMatch(/empty/);
    expect(calls(bins, "codex")).toHaveLength(1);
  });
});
