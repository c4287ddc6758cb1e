import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Turn } from "../../src/dispatch/follow-up/conversation.js";
import { isolatedHome, json, runCli } from "../helpers/cli.js";
import { calls, type FakeRun, fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { ROOT, reapAll, tempDir } from "../helpers/folders.js";

// The thread a turn's CLI named, resumed (specs/dispatch.md §13 and §14): `catherd demo`'s simulated
// agent names its threads as codex does, so a follow-up continues them; and a thread no codex could
// resume is refused by one check, in the turn's words, whether a follow-up or a repair turn would resume it.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

/** The simulated agent of `catherd demo` as an executable, as the demo writes it. */
function simulatedCodex(dir: string): string {
  const launcher = path.join(dir, "simulated-codex");
  const agent = path.join(ROOT, "dist/bin/simulated-agent.js");
  fs.writeFileSync(launcher, `#!/bin/sh\nexec '${process.execPath}' '${agent}' "$@"\n`, { mode: 0o755 });
  return launcher;
}

/** The recorded codex run with its thread id replaced by `thread` and its answer by `text`. */
function codexNaming(thread: string, text: string): FakeRun {
  const lines = recordedLines("codex", "text").map((l) =>
    l
      .replace("01a2264d-a96b-7c23-b4e9-0484292c91b3", thread)
      .replace('"text":"Hello from mockllm."', `"text":${JSON.stringify(text)}`),
  );
  return { lines, exit: 0 };
}

async function dispatchAndWait(env: NodeJS.ProcessEnv, name: string, args: string[]) {
  const started = await runCli(["dispatch", "--json", ...args], { env });
  expect(started.code, started.stdout + started.stderr).toBe(0);
  dispatched.push(json<{ dispatched: { dispatchId: string } }>(started).dispatched.dispatchId);
  const waited = await runCli(["wait", name, "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
  return json<{ records: Record<string, unknown>[] }>(waited).records[0] as Record<string, unknown>;
}

describe("resuming the thread a turn's CLI named", () => {
  it("follows up a thread of catherd demo's simulated agent, which names it as codex does", async () => {
    const { env: base } = isolatedHome();
    const env = { ...base, CATHERD_CODEX_BIN: simulatedCodex(tempDir()) };
    const first = await dispatchAndWait(env, "review", [
      "--backend",
      "codex",
      "--name",
      "review",
      "--brief",
      "Review src/parser.ts for bugs",
    ]);
    expect(first).toMatchObject({ status: "ok" });
    expect(first.thread).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const second = await dispatchAndWait(env, "review", [
      "--follow-up",
      "review",
      "--brief",
      "Fix the two worst ones you found",
    ]);
    expect(second).toMatchObject({ status: "ok", thread: first.thread });
    expect(second.reply).toContain("Followed up: Fix the two worst ones you found");
    const turns = json<{ conversation: Turn[] }>(
      await runCli(["result", "--conversation", "review", "--json"], { env }),
    ).conversation;
    expect(turns.map((t) => [t.turn, t.brief, t.status])).toEqual([
      [1, "Review src/parser.ts for bugs", "ok"],
      [2, "Fix the two worst ones you found", "ok"],
    ]);
  });

  it("refuses a follow-up and a repair turn of a thread codex could not resume, in the turn's words", async () => {
    const { home, env: base } = isolatedHome();
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [codexNaming("demo-4242", '"maybe"')]);
    const schema = path.join(bins, "verdict.schema.json");
    fs.writeFileSync(schema, JSON.stringify({ type: "object", required: ["verdict"] }));
    const env = { ...base, CATHERD_CODEX_BIN: codex };
    const why = /its CLI named a thread codex cannot resume \(a codex thread is a UUID .*, not "demo-4242"\)/;

    const chat = await dispatchAndWait(env, "chat", [
      "--backend",
      "codex",
      "--name",
      "chat",
      "--brief",
      "hi",
    ]);
    expect(chat).toMatchObject({ status: "ok", thread: "demo-4242" });
    const runs = path.join(home, "runs");
    const before = fs.readdirSync(path.join(runs, "default/dispatches/chat"));
    const refused = await runCli(["dispatch", "--follow-up", "chat", "--brief", "more", "--json"], { env });
    expect(refused.code, refused.stdout).toBe(2);
    const error = json<{ error: { code: string; message: string; fix: string } }>(refused).error;
    expect(error.code).toBe("E_INPUT_INVALID");
    expect(error.message).toMatch(why);
    expect(`${error.message} ${error.fix}`).not.toContain("--thread");
    expect(fs.readdirSync(path.join(runs, "default/dispatches/chat"))).toEqual(before);

    // The string parses as JSON but is no object: the answer does not fit, and no repair resumes the thread.
    const judged = await dispatchAndWait(env, "judge", [
      "--backend",
      "codex",
      "--name",
      "judge",
      "--brief",
      "judge it",
      "--answer-schema",
      schema,
    ]);
    expect(judged).toMatchObject({
      status: "failed",
      attempt: 1,
      next: null,
      error: { kind: "answer-invalid" },
    });
    expect((judged.error as { message: string }).message).toMatch(
      new RegExp(`; no repair is possible: ${why.source}$`),
    );
    expect(calls(bins, "codex").filter((argv) => argv.includes("resume"))).toEqual([]);
  });
});
