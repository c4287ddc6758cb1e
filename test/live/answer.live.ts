import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { AttemptSummary } from "../../src/dispatch/read/attempts.js";
import { runCli } from "../helpers/cli.js";
import { diagnostics, dispatcherEnv, type LiveCli, leftovers, useLiveRun } from "./harness.js";
import { ANSWER_SCHEMA, VALID_ANSWER } from "./mock-model-server.js";

// An answer that fits a schema (specs/dispatch.md §13) with the four real CLIs and the mock model's
// `answer` scenario, whose first answer does not fit and whose answer after a repair does. Claude Code and
// codex are given the schema through their own flags — Claude's StructuredOutput tool is in the request,
// codex's request carries a json_schema output format — and Gemini CLI and opencode through the contract
// in the brief. Claude repairs inside its turn (its own check of the tool's input); the others are
// repaired by catherd: a second attempt on the same thread.

/** How each CLI gets the schema (the mock's note on the request) and who repairs its first answer. */
const HOW: Record<LiveCli, { note: string; repairedBy: "catherd" | "the CLI" }> = {
  claude: { note: "structured-output-tool", repairedBy: "the CLI" },
  codex: { note: "output-schema", repairedBy: "catherd" },
  gemini: { note: "contract", repairedBy: "catherd" },
  opencode: { note: "contract", repairedBy: "catherd" },
};

describe.each(["codex", "claude", "gemini", "opencode"] as const)(
  "answer schema (real %s, through catherd dispatch and wait)",
  (cli) => {
    const live = useLiveRun([cli]);

    it("honours the schema, repairs the answer that does not fit, and records the one that does", async () => {
      const { run } = live;
      const schemaDir = fs.mkdtempSync(path.join(os.tmpdir(), "catherd-live-schema-"));
      const schemaFile = path.join(schemaDir, "verdict.schema.json");
      fs.writeFileSync(schemaFile, JSON.stringify(ANSWER_SCHEMA, null, 2));
      try {
        const first = await run.dispatch(cli, "answer", {
          idle: "60s",
          flags: ["--answer-schema", schemaFile],
        });
        const env = dispatcherEnv(path.join(first.root, "catherd-home"));
        const name = `${cli}-answer`;
        const waited = await runCli(["wait", name, "--json", "--timeout", "150s"], {
          env,
          timeoutMs: 180_000,
        });
        const why = `${waited.stdout}${waited.stderr}\n${diagnostics(first, run.server)}`;
        expect(waited.code, why).toBe(0);
        const [record] = (JSON.parse(waited.stdout) as { records: Record<string, unknown>[] }).records;
        expect(record, why).toMatchObject({ status: "ok", answer: VALID_ANSWER, answerErrors: null });

        const model = run.server.requests.filter((r) => r.answer.startsWith("answer-"));
        expect(
          model.map((r) => r.answer),
          why,
        ).toEqual(["answer-invalid", "answer-valid"]);
        expect(new Set(model.map((r) => r.note)), why).toEqual(new Set([HOW[cli].note]));

        const result = await runCli(["result", name, "--json"], { env });
        const attempts = (JSON.parse(result.stdout) as { attempts: AttemptSummary[] }).attempts;
        if (HOW[cli].repairedBy === "the CLI") {
          expect(
            attempts.map((a) => [a.attempt, a.status]),
            why,
          ).toEqual([[1, "ok"]]);
        } else {
          expect(
            attempts.map((a) => [a.attempt, a.status, a.kind]),
            why,
          ).toEqual([
            [1, "failed", "answer-invalid"],
            [2, "ok", null],
          ]);
          // The repair resumed the thread the first attempt named.
          const [one, two] = attempts as [AttemptSummary, AttemptSummary];
          const thread = (
            JSON.parse(fs.readFileSync(path.join(one.dir, "record.json"), "utf8")) as { thread: string }
          ).thread;
          const args = (
            JSON.parse(fs.readFileSync(path.join(two.dir, "spec.json"), "utf8")) as { args: string[] }
          ).args;
          expect(args, why).toContain(thread);
          expect(leftovers({ ...first, dispatchId: two.dispatchId, dir: two.dir }), why).toEqual([]);
        }
        const answer = await runCli(["result", name, "--answer"], { env });
        expect(answer.code, answer.stderr).toBe(0);
        expect(JSON.parse(answer.stdout)).toEqual(VALID_ANSWER);
        expect(leftovers(first), why).toEqual([]);
      } finally {
        fs.rmSync(schemaDir, { recursive: true, force: true });
      }
    });
  },
);
