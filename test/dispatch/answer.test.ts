import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AttemptSummary } from "../../src/dispatch/read/attempts.js";
import { isolatedHome, json, runCli } from "../helpers/cli.js";
import { calls, type FakeRun, fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";

// An answer that fits a schema, with real processes (specs/dispatch.md, "An answer that fits a schema"):
// fake CLIs that print what the real ones print (test/fixtures/recorded) with the answer changed,
// dispatched through the real CLI; the repair turn handed over by the real promoter.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

const SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { verdict: { enum: ["pass", "fail"] }, count: { type: "integer", minimum: 0 } },
  required: ["verdict", "count"],
  additionalProperties: false,
};

/** The codex recording of a plain answer, its final message replaced by `text`. */
function codexSaying(text: string): FakeRun {
  const lines = recordedLines("codex", "text").map((l) =>
    l.replace('"text":"Hello from mockllm."', `"text":${JSON.stringify(text)}`),
  );
  return { lines, exit: 0 };
}

const THREAD = "01a2264d-a96b-7c23-b4e9-0484292c91b3";

/** An isolated home, a fake codex playing `runs`, and a schema file. */
function codexWith(runs: FakeRun[]) {
  const { home, env: base } = isolatedHome();
  const bins = tempDir();
  const codex = fakeCli(bins, "codex", runs);
  const schemaFile = path.join(bins, "verdict.schema.json");
  fs.writeFileSync(schemaFile, JSON.stringify(SCHEMA, null, 2));
  return { home, bins, schemaFile, env: { ...base, CATHERD_CODEX_BIN: codex } };
}

async function dispatchCodex(env: NodeJS.ProcessEnv, name: string, flags: string[]) {
  const started = await runCli(
    ["dispatch", "--backend", "codex", "--name", name, "--brief", "judge it", "--json", ...flags],
    { env },
  );
  const first = json<{ dispatched: { dispatchId: string; dir: string } }>(started).dispatched;
  dispatched.push(first.dispatchId);
  return first;
}

describe("an answer that fits a schema, with real processes", () => {
  it("repairs an answer that does not fit on the same thread, and records the answer that does", async () => {
    const { bins, schemaFile, env } = codexWith([
      codexSaying('{"verdict": "maybe", "count": -1}'),
      codexSaying('```json\n{"verdict": "pass", "count": 3}\n```'),
    ]);
    const first = await dispatchCodex(env, "judge", ["--answer-schema", schemaFile]);
    // The schema is the folder's, and spec.json names it; a repair may follow, so the dispatch has a ladder.
    const copy = path.join(first.dir, "answer-schema.json");
    expect(JSON.parse(fs.readFileSync(copy, "utf8"))).toEqual(SCHEMA);
    expect(JSON.parse(fs.readFileSync(path.join(first.dir, "spec.json"), "utf8")).answerSchema).toBe(copy);
    expect(JSON.parse(fs.readFileSync(path.join(first.dir, "admit.json"), "utf8")).ladder).toMatchObject({
      rungs: [],
      repairs: 1,
    });

    const waited = await runCli(["wait", "judge", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    expect(waited.code, waited.stdout + waited.stderr).toBe(0);
    const [record] = json<{ records: Record<string, unknown>[] }>(waited).records;
    expect(record).toMatchObject({
      status: "ok",
      attempt: 2,
      next: null,
      answer: { verdict: "pass", count: 3 },
      answerErrors: null,
    });

    const full = json<{ attempts: AttemptSummary[] }>(await runCli(["result", "judge", "--json"], { env }));
    for (const a of full.attempts) dispatched.push(a.dispatchId);
    expect(full.attempts.map((a) => [a.attempt, a.status, a.kind])).toEqual([
      [1, "failed", "answer-invalid"],
      [2, "ok", null],
    ]);
    const [one, two] = full.attempts as [AttemptSummary, AttemptSummary];
    const record1 = JSON.parse(fs.readFileSync(path.join(one.dir, "record.json"), "utf8"));
    expect(record1).toMatchObject({
      status: "failed",
      answer: null,
      answerErrors: [
        { path: "/verdict", message: 'must be equal to one of the allowed values: "pass", "fail"' },
        { path: "/count", message: "must be >= 0" },
      ],
      error: { kind: "answer-invalid", code: "exited" },
      next: { backend: "codex", why: "repair", notBefore: null },
    });
    expect(record1.error.message).toMatch(
      /does not fit --answer-schema: \/verdict .*; a repair turn follows/,
    );
    expect(fs.existsSync(path.join(one.dir, "answer.json"))).toBe(false);

    // The repair resumed the thread the first attempt named, with the schema again and the errors as brief.
    const [call1, call2] = calls(bins, "codex") as [string[], string[]];
    expect(call1).toEqual(expect.arrayContaining(["--output-schema", copy]));
    expect(call1).not.toContain("resume");
    expect(call2.slice(0, 2)).toEqual(["exec", "resume"]);
    expect(call2).toEqual(
      expect.arrayContaining([THREAD, "--output-schema", path.join(two.dir, "answer-schema.json")]),
    );
    const brief2 = fs.readFileSync(path.join(two.dir, "brief.md"), "utf8");
    expect(brief2).toContain("Your answer did not fit the JSON Schema");
    expect(brief2).toContain("- /count: must be >= 0");
    expect(brief2).toContain('"additionalProperties": false');
    expect(JSON.parse(fs.readFileSync(path.join(two.dir, "admit.json"), "utf8"))).toMatchObject({
      attempt: 2,
      failoverFrom: one.dispatchId,
      ladder: { rungs: [] },
    });
    expect(
      JSON.parse(fs.readFileSync(path.join(two.dir, "admit.json"), "utf8")).ladder.repairs,
    ).toBeUndefined();

    // answer.json beside reply.md, and `result --answer` prints it alone.
    expect(JSON.parse(fs.readFileSync(path.join(two.dir, "answer.json"), "utf8"))).toEqual({
      verdict: "pass",
      count: 3,
    });
    const answer = await runCli(["result", "judge", "--answer"], { env });
    expect(answer.code, answer.stderr).toBe(0);
    expect(JSON.parse(answer.stdout)).toEqual({ verdict: "pass", count: 3 });
    const shown = await runCli(["result", "judge"], { env });
    expect(shown.stdout).toContain(
      'answer: {"verdict":"pass","count":3} (all of it: catherd result --answer judge)',
    );
  });

  it("records answer-invalid once the repairs are spent, and result --answer says there is none", async () => {
    const { bins, schemaFile, env } = codexWith([codexSaying("The verdict is pass.")]);
    await dispatchCodex(env, "prose", ["--answer-schema", schemaFile]);
    const waited = await runCli(["wait", "prose", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    expect(waited.code).toBe(1);
    const [record] = json<{ records: Record<string, unknown>[] }>(waited).records;
    expect(record).toMatchObject({
      status: "failed",
      attempt: 2,
      next: null,
      answer: null,
      answerErrors: [{ path: "", message: expect.stringMatching(/^the final message is not JSON/) }],
      error: { kind: "answer-invalid" },
    });
    expect(String((record?.error as { message?: string } | undefined)?.message)).not.toMatch(
      /repair turn follows/,
    );
    expect(calls(bins, "codex")).toHaveLength(2);
    const full = json<{ attempts: AttemptSummary[] }>(await runCli(["result", "prose", "--json"], { env }));
    for (const a of full.attempts) dispatched.push(a.dispatchId);

    const answer = await runCli(["result", "prose", "--answer"], { env });
    expect(answer.code).toBe(1);
    expect(answer.stdout).toBe("");
    expect(answer.stderr).toMatch(/E_NO_ANSWER: prose's answer did not fit its schema/);
  });

  it("with --repair 0 fails at once, and a plain dispatch has no answer for result --answer", async () => {
    const { bins, schemaFile, env } = codexWith([codexSaying('{"verdict": "pass"}')]);
    const first = await dispatchCodex(env, "once", ["--answer-schema", schemaFile, "--repair", "0"]);
    expect(JSON.parse(fs.readFileSync(path.join(first.dir, "admit.json"), "utf8")).ladder).toBeUndefined();
    const waited = await runCli(["wait", "once", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    const [record] = json<{ records: Record<string, unknown>[] }>(waited).records;
    expect(record).toMatchObject({
      status: "failed",
      error: { kind: "answer-invalid" },
      answerErrors: [{ path: "", message: "must have required property 'count'" }],
    });
    expect(calls(bins, "codex")).toHaveLength(1);

    await dispatchCodex(env, "plain", []);
    await runCli(["wait", "plain", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    const answer = await runCli(["result", "plain", "--answer", "--json"], { env });
    expect(answer.code).toBe(1);
    expect(json<{ error: { code: string; message: string } }>(answer).error).toMatchObject({
      code: "E_NO_ANSWER",
      message: "plain was dispatched without --answer-schema: its record has no answer",
    });
  });

  it("fails at once when the CLI named no thread to resume, and leaves a failure of another kind as it was", async () => {
    const noThread = codexSaying("not json");
    noThread.lines = noThread.lines.filter((l) => !l.includes('"thread.started"'));
    const { bins, schemaFile, env } = codexWith([noThread]);
    await dispatchCodex(env, "nothread", ["--answer-schema", schemaFile]);
    const waited = await runCli(["wait", "nothread", "--json", "--timeout", "60s"], {
      env,
      timeoutMs: 90_000,
    });
    const [record] = json<{ records: Record<string, unknown>[] }>(waited).records;
    expect(record).toMatchObject({ status: "failed", attempt: 1, next: null, thread: null });
    expect(record?.error).toMatchObject({
      kind: "answer-invalid",
      message: expect.stringMatching(/; no repair is possible: its CLI never named its thread$/),
    });
    expect(calls(bins, "codex")).toHaveLength(1);

    const quota = codexWith([{ lines: recordedLines("codex", "quota"), exit: 1 }]);
    await dispatchCodex(quota.env, "quota", ["--answer-schema", quota.schemaFile]);
    const ended = await runCli(["wait", "quota", "--json", "--timeout", "60s"], {
      env: quota.env,
      timeoutMs: 90_000,
    });
    expect(json<{ records: Record<string, unknown>[] }>(ended).records[0]).toMatchObject({
      status: "limit",
      error: { kind: "quota" },
      answer: null,
      answerErrors: null,
      next: null,
    });
  });

  it("takes Claude Code's structured_output as the answer, given the schema by --json-schema", async () => {
    const { env: base } = isolatedHome();
    const bins = tempDir();
    const lines = recordedLines("claude", "text").map((l) =>
      l.startsWith('{"type":"result"')
        ? JSON.stringify({ ...JSON.parse(l), result: "", structured_output: { verdict: "fail", count: 0 } })
        : l,
    );
    const claude = fakeCli(bins, "claude", [{ lines, exit: 0 }]);
    const schemaFile = path.join(bins, "s.json");
    fs.writeFileSync(schemaFile, JSON.stringify(SCHEMA));
    const env = { ...base, CATHERD_CLAUDE_BIN: claude };
    const started = await runCli(
      [
        "dispatch",
        "--backend",
        "claude-code",
        "--name",
        "c",
        "--brief",
        "b",
        "--answer-schema",
        schemaFile,
        "--json",
      ],
      { env },
    );
    dispatched.push(json<{ dispatched: { dispatchId: string } }>(started).dispatched.dispatchId);
    const waited = await runCli(["wait", "c", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
    expect(json<{ records: Record<string, unknown>[] }>(waited).records[0]).toMatchObject({
      status: "ok",
      answer: { verdict: "fail", count: 0 },
    });
    const [argv] = calls(bins, "claude") as [string[]];
    expect(argv[argv.indexOf("--json-schema") + 1]).toBe(JSON.stringify(SCHEMA));
  });

  it("refuses a schema that is not JSON or not a schema, and --repair without one, before writing anything", async () => {
    const { home, bins, env } = codexWith([codexSaying("{}")]);
    const notJson = path.join(bins, "not.json");
    fs.writeFileSync(notJson, "{ type: object }");
    const notSchema = path.join(bins, "bad.json");
    fs.writeFileSync(notSchema, JSON.stringify({ type: "objekt" }));
    const cases: [string[], RegExp][] = [
      [["--answer-schema", notJson], new RegExp(`--answer-schema ${notJson} is not JSON: `)],
      [
        ["--answer-schema", notSchema],
        new RegExp(
          `--answer-schema ${notSchema} is not a valid JSON Schema \\(draft 2020-12\\): data/type must be`,
        ),
      ],
      [["--answer-schema", path.join(bins, "none.json")], /cannot be read \(ENOENT\)/],
      [["--repair", "1"], /--repair needs --answer-schema/],
      [
        ["--answer-schema", notSchema.replace("bad", "verdict.schema"), "--repair", "9"],
        /not a whole number from 0 to 5/,
      ],
      [
        ["--answer-schema", notSchema.replace("bad", "verdict.schema"), "--outcome"],
        /--outcome and --answer-schema cannot be given together/,
      ],
    ];
    for (const [flags, message] of cases) {
      const r = await runCli(["dispatch", "--backend", "codex", "--brief", "b", "--json", ...flags], { env });
      expect(r.code, flags.join(" ")).toBe(2);
      const error = json<{ error: { code: string; message: string } }>(r).error;
      expect(error.code).toBe("E_INPUT_INVALID");
      expect(error.message).toMatch(message);
    }
    const exec = await runCli(
      [
        "dispatch",
        "--backend",
        "exec",
        "--answer-schema",
        path.join(bins, "verdict.schema.json"),
        "--json",
        "--",
        "/bin/true",
      ],
      { env },
    );
    expect(exec.code).toBe(2);
    expect(json<{ error: { message: string } }>(exec).error.message).toBe(
      "--answer-schema is for an agent's final answer; exec runs a command",
    );
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
    expect(calls(bins, "codex")).toHaveLength(0);
  });
});
