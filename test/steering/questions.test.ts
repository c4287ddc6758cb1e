import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { readJson, tempDir } from "../helpers/folders.js";
import { FAKE_CLAUDE, useSteeredDispatches } from "../helpers/steering.js";
import { waitFor, waitForFile, waitForJson } from "../helpers/wait.js";

// What a steerable agent asks (specs/steering.md, "Questions"), with real processes: the stand-in speaks
// Claude Code's permission protocol (`--permission-prompt-tool stdio`), its asks become questions/, and
// `catherd answer` or the --on-question policy gives each its one answer.

const steered = useSteeredDispatches();

function home(): NodeJS.ProcessEnv {
  return { ...isolatedHome().env, CATHERD_CLAUDE_BIN: FAKE_CLAUDE };
}

function dispatch(env: NodeJS.ProcessEnv, name: string, brief: string, extra: string[]) {
  return steered.dispatch(env, name, brief, extra);
}

function toolResults(dir: string): { content: unknown; is_error: boolean }[] {
  return fs
    .readFileSync(path.join(dir, "events.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.includes('"tool_result"'))
    .map(
      (l) =>
        (JSON.parse(l) as { message: { content: { content: unknown; is_error: boolean }[] } }).message
          .content[0],
    )
    .filter((c): c is { content: unknown; is_error: boolean } => c !== undefined);
}

describe("catherd answer", () => {
  it("allows a permission the agent asked for: once, and the tool runs", async () => {
    const env = home();
    const d = await dispatch(env, "asks", "[ask] run the tests", ["--on-question", "wait 2m"]);
    await waitForFile(path.join(d.dir, "questions", "q1.json"), 20_000);
    const q = readJson(path.join(d.dir, "questions", "q1.json"));
    expect(q).toMatchObject({ id: "q1", kind: "permission", tool: "Bash" });
    const answered = await runCli(["answer", "asks", "q1", "--allow", "--json"], { env });
    expect(answered.stderr).toBe("");
    expect(JSON.parse(answered.stdout).answered).toMatchObject({ id: "q1", allow: true });
    // The first answer stands.
    const again = await runCli(["answer", "asks", "q1", "--deny"], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /E_ALREADY_ANSWERED: asks q1 is answered already \(allowed by catherd answer/,
    );
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record).toMatchObject({ status: "ok", reply: "done: [ask] run the tests" });
    expect(toolResults(d.dir)).toEqual([expect.objectContaining({ is_error: false })]);
    expect(record.steering).toMatchObject({
      questions: { asked: 1, answered: 1, byPolicy: 0, unanswered: 0 },
    });
    expect(fs.existsSync(path.join(d.dir, "questions", "q1.delivered.json"))).toBe(true);
    const unknown = await runCli(["answer", "asks", "q7", "--allow"], { env });
    expect(unknown.stderr).toMatch(/E_QUESTION_NOT_FOUND: asks asked no question q7/);
  });

  it("denies with why, which the agent reads; the tool does not run", async () => {
    const env = home();
    const d = await dispatch(env, "denied", "[ask] delete the cache", ["--on-question", "wait 2m"]);
    await waitForFile(path.join(d.dir, "questions", "q1.json"), 20_000);
    expect(
      (await runCli(["answer", "denied", "q1", "--deny", "--why", "not on this machine"], { env })).code,
    ).toBe(0);
    await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(toolResults(d.dir)).toEqual([
      {
        content: "not on this machine",
        is_error: true,
        tool_use_id: expect.any(String),
        type: "tool_result",
      },
    ]);
  });

  it("answers a question for the user with text", async () => {
    const env = home();
    const d = await dispatch(env, "which", "[question] set up the store", ["--on-question", "wait 2m"]);
    await waitForFile(path.join(d.dir, "questions", "q1.json"), 20_000);
    expect(readJson(path.join(d.dir, "questions", "q1.json"))).toMatchObject({
      kind: "question",
      asks: "Which database?",
    });
    expect((await runCli(["answer", "which", "q1", "sqlite"], { env })).code).toBe(0);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record.reply).toBe('done: [question] set up the store | answer: {"Which database?":"sqlite"}');
  });
});

describe("--on-question", () => {
  it("denies what nobody answered within its wait, and counts it the policy's; --notify ran for the question", async () => {
    const env = home();
    const out = path.join(tempDir(), "notified");
    const notify = `printf '%s %s %s\\n' "$CATHERD_STATUS" "$CATHERD_QUESTION" "$CATHERD_ASKS" >> "${out}"`;
    const d = await dispatch(env, "nobody", "[ask] run it", ["--on-question", "wait 2s", "--notify", notify]);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record.status).toBe("ok");
    const answer = readJson(path.join(d.dir, "questions", "q1.answer.json"));
    expect(answer).toMatchObject({
      allow: false,
      by: "policy",
      why: "nobody answered within 2 s (--on-question wait)",
    });
    expect(record.steering).toMatchObject({ questions: { asked: 1, answered: 1, byPolicy: 1 } });
    expect(toolResults(d.dir)[0]?.is_error).toBe(true);
    // Both notifications have run to their end: the question's, then the record's.
    const log = path.join(d.dir, "notify.log");
    await waitFor("both notifications to end", () => {
      const text = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "";
      return (text.match(/: exit code 0 after/g) ?? []).length >= 2 ? true : undefined;
    });
    const lines = fs.readFileSync(out, "utf8").trim().split("\n");
    expect(lines[0]).toMatch(/^question q1 \$ sleep 0\.3/);
    expect(lines[1]).toMatch(/^ok/);
  });

  it("allow answers at once, and nobody is notified", async () => {
    const env = home();
    const d = await dispatch(env, "trusted", "[ask] run it", ["--on-question", "allow"]);
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record.status).toBe("ok");
    expect(readJson(path.join(d.dir, "questions", "q1.answer.json"))).toMatchObject({
      allow: true,
      by: "policy",
    });
    expect(toolResults(d.dir)[0]?.is_error).toBe(false);
  });
});
