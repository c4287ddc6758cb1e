import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { waitFor, waitForJson } from "../helpers/wait.js";
import {
  dispatchSteered,
  killAndAdopt,
  logLines,
  pausedAt,
  readMore,
  recordedOk,
  requests,
  steeredHome,
} from "./codex-steered.js";
import { trial, useFaultKit } from "./kit.js";

// Row 16h: a steerable codex whose supervisor is SIGKILLed after it gave a question's answer to codex and
// before it wrote questions/<q>.delivered.json, codex not having taken it yet. Its adopter, which finds the
// request not resolved (no serverRequest/resolved in the backlog), gives the answer again; codex drops an
// answer to a request it no longer waits on, saying nothing in the stream (specs/steering.md, "codex: what
// an adopter may conclude"), and so does the stand-in: codex acts on one answer and the verdict stands.

useFaultKit();

describe("row 16h, codex: killed after giving a question's answer, before questions/<q>.delivered.json", () => {
  it("the adopter gives it again; codex acts on the first and drops the second: the verdict stands", async () => {
    const t = trial("16h codex: supervisor SIGKILLed after giving an answer, before its delivered.json");
    const hold = path.join(t.dir(), "release");
    // The stand-in reads the answer but takes it only once the adopter has written its first line.
    const s = steeredHome(t, {
      CATHERD_TEST_ONLY_PAUSE_AT: "answer-written",
      FAKE_CODEX_HOLD: "response",
      FAKE_CODEX_HOLD_UNTIL: hold,
    });
    const d = await dispatchSteered(t, s, "codex-answered", "[tool:1000] run it", [
      "--on-question",
      "wait 1m",
    ]);
    await waitForJson(path.join(d.dir, "questions", "q1.json"), 30_000);
    const answer = await runCli(["answer", "codex-answered", "q1", "--allow", "--json"], {
      env: { ...s.env, CATHERD_TEST_ONLY_PAUSE_AT: "" },
      timeoutMs: 30_000,
    });
    expect(answer.code, answer.stderr).toBe(0);
    const killed = await pausedAt(d.dir, "answer-written");
    expect(fs.existsSync(path.join(d.dir, "questions", "q1.delivered.json"))).toBe(false);
    const answers = () => requests(s).filter((r) => r.method === "response" && r.id === 0).length;
    await waitFor("the answer read by codex (not taken yet)", () => (answers() === 1 ? true : undefined));
    const before = requests(s).length;
    const adopter = await killAndAdopt(t, s, d, killed);
    await readMore(s, before, "the adopter's first line");
    fs.writeFileSync(hold, "");
    const record = await recordedOk(d, adopter);
    expect(record.reply).toBe("done: [tool:1000] run it");
    expect(fs.existsSync(path.join(d.dir, "questions", "q1.delivered.json"))).toBe(true);
    expect((record.steering as { questions: Record<string, number> }).questions).toMatchObject({
      asked: 1,
      answered: 1,
    });
    // Not resolved in its backlog, the answer was given again by the adopter; codex took the first only.
    expect(logLines(d.dir, "answered").length, "the adopter's answers").toBe(1);
    expect(answers(), "answers codex read").toBe(2);
    t.pass();
  });
});
