import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ResponseFile } from "../../src/domain/steering/questions.js";

// Two answers at the same moment, made deterministic: the rival's answer lands between this answer's
// look at the question (still unanswered) and its exclusive create — the window two `catherd answer`
// processes race through. The dispatch is seen running; the rest is the real folder code.

const rival: Omit<ResponseFile, "schema"> = {
  id: "q1",
  allow: false,
  text: null,
  why: "not now",
  by: "rival",
  at: "2026-12-06T08:00:00.000Z",
};

vi.mock("../../src/dispatch/read/inspect.js", () => ({
  inspectDispatch: (dir: string) => ({
    dir,
    dispatchId: "d-race",
    state: "running",
    admit: { name: "race" },
  }),
}));

vi.mock("../../src/folder/question-files.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/folder/question-files.js")>();
  return {
    ...real,
    writeResponse: (dir: string, answer: Omit<ResponseFile, "schema">) => {
      real.writeResponse(dir, rival);
      return real.writeResponse(dir, answer);
    },
  };
});

const { answerQuestion } = await import("../../src/dispatch/steer/answer-question.js");
const { writeQuestion } = await import("../../src/folder/question-files.js");

describe("two answers at the same moment", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "catherd-answer-race-"));
    writeQuestion(dir, {
      id: "q1",
      kind: "permission",
      asks: "run: rm -rf build",
      tool: "Bash",
      input: { command: "rm -rf build" },
      askedAt: "2026-12-06T07:59:00.000Z",
      answerBy: "2026-12-06T08:59:00.000Z",
      request: { requestId: "r1" },
    });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("refuses the one that lost the exclusive create as E_ALREADY_ANSWERED, naming the answer that stands", () => {
    const lost = () => answerQuestion(dir, "q1", { allow: true, text: null, why: null, by: "person" });
    expect(lost).toThrow(expect.objectContaining({ code: "E_ALREADY_ANSWERED" }));
    expect(lost).toThrow(/race q1 is answered already \(denied by rival at 2026-12-06T08:00:00.000Z\)/);
    const stands = JSON.parse(fs.readFileSync(path.join(dir, "questions", "q1.answer.json"), "utf8"));
    expect(stands).toMatchObject({ by: "rival", allow: false });
  });
});
