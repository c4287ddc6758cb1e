import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { FAKE_CLAUDE, useSteeredDispatches } from "../helpers/steering.js";
import { waitFor, waitForJson } from "../helpers/wait.js";

// An agent's event line is bounded in depth where it is parsed (specs/backends.md, "Depth"): a tool call
// and its permission ask nested 20,000 deep, through the real CLI, supervisor and readers.

const steered = useSteeredDispatches();

describe("an agent whose tool call is nested 20,000 deep", () => {
  it("is recorded ok, its question answerable, show and logs readable", async () => {
    const env = { ...isolatedHome().env, CATHERD_CLAUDE_BIN: FAKE_CLAUDE };
    const d = await steered.dispatch(env, "deep", "[ask] [deep] run it", ["--on-question", "wait 2m"]);
    const q1 = path.join(d.dir, "questions", "q1.json");
    const recordFile = path.join(d.dir, "record.json");
    // The question, or a record that came first (a supervisor that died on the line records at once).
    await waitFor(
      "q1.json or the record",
      () => (fs.existsSync(q1) || fs.existsSync(recordFile) ? true : undefined),
      20_000,
    );
    expect(
      fs.existsSync(q1) ? null : fs.readFileSync(recordFile, "utf8"),
      "recorded before its question",
    ).toBeNull();
    const question = fs.readFileSync(q1, "utf8");
    expect(JSON.parse(question)).toMatchObject({ kind: "permission", tool: "Bash" });
    expect(question).toContain(`"[nested deeper than 256 levels]"`);
    const answered = await runCli(["answer", "deep", "q1", "--allow"], { env });
    expect(answered.stderr).toBe("");
    expect(answered.code).toBe(0);
    const record = await waitForJson(recordFile, 30_000);
    expect(record).toMatchObject({ status: "ok", reply: "done: [ask] [deep] run it" });
    const shown = await runCli(["show", "deep"], { env });
    expect(shown.stderr).toBe("");
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/q1 permission: /);
    const json = await runCli(["show", "deep", "--json"], { env });
    expect(JSON.parse(json.stdout).steering.questions).toEqual([
      expect.objectContaining({ id: "q1", waiting: false }),
    ]);
    expect((await runCli(["status", "--json"], { env })).code).toBe(0);
    const logs = await runCli(["logs", "deep"], { env });
    expect(logs.stderr).toBe("");
    expect(logs.code).toBe(0);
  });
});
