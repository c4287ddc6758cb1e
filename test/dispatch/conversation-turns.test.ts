import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Turn } from "../../src/dispatch/follow-up/conversation.js";
import { isolatedHome, json, runCli } from "../helpers/cli.js";
import { type FakeRun, fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";

// A conversation whose turns needed more than one attempt (specs/cli.md, `result --conversation`): each
// turn is listed once, from its first attempt's brief — the person's, never catherd's repair text — to its
// last attempt's record. A fake codex plays the recorded codex run with its answer changed.

const dispatched: string[] = [];

afterEach(() => {
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

function codexSaying(text: string): FakeRun {
  const lines = recordedLines("codex", "text").map((l) =>
    l.replace('"text":"Hello from mockllm."', `"text":${JSON.stringify(text)}`),
  );
  return { lines, exit: 0 };
}

const SCHEMA = { type: "object", required: ["verdict"], properties: { verdict: { enum: ["pass", "fail"] } } };

async function turn(env: NodeJS.ProcessEnv, args: string[]): Promise<void> {
  const started = await runCli(["dispatch", "--json", ...args], { env });
  expect(started.code, started.stdout + started.stderr).toBe(0);
  dispatched.push(json<{ dispatched: { dispatchId: string } }>(started).dispatched.dispatchId);
  const waited = await runCli(["wait", "judge", "--json", "--timeout", "60s"], { env, timeoutMs: 90_000 });
  expect(waited.code, waited.stdout + waited.stderr).toBe(0);
}

describe("result --conversation of turns that needed a repair", () => {
  it("lists every turn once, with the person's brief and the last attempt's record", async () => {
    const { env: base } = isolatedHome();
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [
      codexSaying('{"verdict": "maybe"}'),
      codexSaying('{"verdict": "pass"}'),
      codexSaying('{"verdict": "unsure"}'),
      codexSaying('{"verdict": "fail"}'),
    ]);
    const schema = path.join(bins, "verdict.schema.json");
    fs.writeFileSync(schema, JSON.stringify(SCHEMA));
    const env = { ...base, CATHERD_CODEX_BIN: codex };
    const asked = ["--answer-schema", schema];
    await turn(env, ["--backend", "codex", "--name", "judge", "--brief", "judge it", ...asked]);
    await turn(env, ["--follow-up", "judge", "--brief", "judge it again", ...asked]);

    const listed = await runCli(["result", "--conversation", "judge", "--json"], { env });
    const turns = json<{ conversation: Turn[] }>(listed).conversation;
    expect(turns.map((t) => [t.turn, t.brief, t.status, t.reply])).toEqual([
      [1, "judge it", "ok", '{"verdict": "pass"}'],
      [2, "judge it again", "ok", '{"verdict": "fail"}'],
    ]);
    for (const t of turns) dispatched.push(...t.attempts);
    expect(turns.map((t) => t.attempts.length)).toEqual([2, 2]);
    const [one, two] = turns as [Turn, Turn];
    // The record is the last attempt's; the follow-up continues it and is linked from its first attempt.
    expect(one.dispatchId).toBe(one.attempts[1]);
    expect(one.followedUpBy).toBe(two.attempts[0]);
    expect(two.followUpOf).toBe(one.dispatchId);
    expect(two.followedUpBy).toBeNull();

    // The same conversation whichever attempt it is asked from, and in the words people read.
    for (const id of [...one.attempts, ...two.attempts]) {
      const again = json<{ conversation: Turn[] }>(
        await runCli(["result", "--conversation", id, "--json"], { env }),
      ).conversation;
      expect(again.map((t) => t.dispatchId)).toEqual([one.dispatchId, two.dispatchId]);
    }
    const text = (await runCli(["result", "--conversation", "judge"], { env })).stdout;
    expect(text).toContain("  brief: judge it\n");
    expect(text).toContain("  brief: judge it again\n");
    expect(text).not.toContain("did not fit");
    const shown = await runCli(["show", one.attempts[0] as string], { env });
    expect(shown.stdout).toContain("conversation: turn 1 of 2");
  });
});
