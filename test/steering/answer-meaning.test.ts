import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { writeResponse } from "../../src/folder/question-files.js";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { readJson } from "../helpers/folders.js";
import { FAKE_CLAUDE, useSteeredDispatches } from "../helpers/steering.js";
import { waitForFile, waitForJson } from "../helpers/wait.js";

// A person's answer means what they said (specs/steering.md, "Questions"): a permission takes allow or
// deny, never a text; of answers given at the same moment the first stands and every other is told so.

const steered = useSteeredDispatches();

function home(): NodeJS.ProcessEnv {
  return { ...isolatedHome().env, CATHERD_CLAUDE_BIN: FAKE_CLAUDE };
}

async function asked(env: NodeJS.ProcessEnv, name: string, brief: string): Promise<string> {
  const d = await steered.dispatch(env, name, brief, ["--on-question", "wait 2m"]);
  await waitForFile(path.join(d.dir, "questions", "q1.json"), 20_000);
  return d.dir;
}

const answerFile = (dir: string) => path.join(dir, "questions", "q1.answer.json");

describe("an answer that does not fit its question", () => {
  it("refuses a text to a permission, naming --allow and --deny, and writes nothing; --deny then answers it", async () => {
    const env = home();
    const dir = await asked(env, "perm", "[ask] run the tests");
    for (const text of ["no", "yes", "deny"]) {
      const refused = await runCli(["answer", "perm", "q1", text], { env });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /E_INPUT_INVALID: perm q1 \(\$ .*\): a permission is answered by allow or deny, not by a text/,
      );
      expect(refused.stderr).toMatch(/fix: answer perm q1 with --allow or --deny/);
    }
    expect(fs.existsSync(answerFile(dir))).toBe(false);
    expect((await runCli(["answer", "perm", "q1", "--deny", "--why", "not now"], { env })).code).toBe(0);
    const record = await waitForJson(path.join(dir, "record.json"), 30_000);
    expect(record.steering).toMatchObject({ questions: { asked: 1, answered: 1, byPolicy: 0 } });
    expect(readJson(answerFile(dir))).toMatchObject({ allow: false, text: null, why: "not now" });
    // The tool never ran: the denial is its result.
    expect(fs.readFileSync(path.join(dir, "events.jsonl"), "utf8")).toContain(
      '"content":"not now","is_error":true',
    );
  });

  it("denies a permission whose answer file holds a text (written by hand), saying why: the tool does not run", async () => {
    const env = home();
    const dir = await asked(env, "byhand", "[ask] run the tests");
    writeResponse(dir, {
      id: "q1",
      allow: true,
      text: "no",
      why: null,
      by: "a hand",
      at: new Date().toISOString(),
    });
    await waitForJson(path.join(dir, "record.json"), 30_000);
    expect(fs.readFileSync(path.join(dir, "events.jsonl"), "utf8")).toContain(
      '"content":"denied by catherd: a permission is answered by allow or deny, not by a text","is_error":true',
    );
  });

  it("refuses --allow to a question for the user: it takes a text, or --deny", async () => {
    const env = home();
    const dir = await asked(env, "which", "[question] set up the store");
    const refused = await runCli(["answer", "which", "q1", "--allow"], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /E_INPUT_INVALID: which q1 \(Which database\?\): a question is answered by its text/,
    );
    expect(fs.existsSync(answerFile(dir))).toBe(false);
    expect((await runCli(["answer", "which", "q1", "sqlite"], { env })).code).toBe(0);
    await waitForJson(path.join(dir, "record.json"), 30_000);
  });
});

describe("answers at the same moment", () => {
  it("lets one stand; every other is E_ALREADY_ANSWERED (exit 1), naming the one that stands", async () => {
    const env = home();
    const dir = await asked(env, "race", "[ask] run the tests");
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        runCli(["answer", "race", "q1", i % 2 === 0 ? "--allow" : "--deny"], { env }),
      ),
    );
    expect(answers.map((a) => a.code).sort()).toEqual([0, 1, 1, 1, 1, 1]);
    const first = readJson(answerFile(dir));
    const said = first.allow === true ? "allowed" : "denied";
    for (const lost of answers.filter((a) => a.code === 1)) {
      expect(lost.stderr).toMatch(
        new RegExp(`^error E_ALREADY_ANSWERED: race q1 is answered already \\(${said} by catherd answer`),
      );
    }
    await waitForJson(path.join(dir, "record.json"), 30_000);
  });
});
