import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  checkPrerequisites,
  diagnostics,
  type LiveCli,
  LiveRun,
  leftovers,
  waitForRecord,
} from "./harness.js";
import { type MockModelServer, spendScenario, startMockModelServer } from "./mock-model-server.js";

// --max-tokens against each real CLI (specs/live-suite.md, "spend"): the mock answers every model request
// with the usage this test sets — 20,000 prompt tokens (half of them read from the cache) and 100 output
// tokens — and a shell call (`sleep 1`) fifty times over; the cap is 50,000 tokens, crossed by the third
// request. The supervisor must stop the CLI within one usage report of the crossing; how many requests
// the mock served and how far the record's tokens went past the cap is the CLI's overshoot, written to
// $CATHERD_LIVE_SPEND_OUT (default: the temp folder) and into specs/backends.md.

const PER_REQUEST = { input: 20_000, output: 100 };
const CAP = 50_000;
const SCENARIO = spendScenario({ ...PER_REQUEST, calls: 50 });
/** Requests it takes to reach the cap. */
const CROSSING = Math.ceil(CAP / (PER_REQUEST.input + PER_REQUEST.output));
const MODEL_ANSWERS = new Set(["tool-call", "final", "text"]);
const OUT = process.env.CATHERD_LIVE_SPEND_OUT ?? path.join(os.tmpdir(), "catherd-live-spend.jsonl");

let server: MockModelServer;
let run: LiveRun;
beforeEach(async () => {
  server = await startMockModelServer({ quiet: true });
  run = new LiveRun(server);
});

// A failed test keeps its folders. Read from the task's result: vitest runs onTestFailed handlers only
// after the afterEach hooks, too late for the reap.
afterEach(async (context) => {
  await run.reap(context.task.result?.state === "fail");
});

describe("the real CLIs under --max-tokens", () => {
  for (const cli of ["codex", "claude", "gemini", "opencode"] as LiveCli[]) {
    it(`${cli}: stopped within one usage report of crossing --max-tokens ${CAP}, its overshoot measured`, async () => {
      checkPrerequisites(cli);
      const d = await run.dispatch(cli, SCENARIO, {
        idle: "90s",
        wall: "4m",
        flags: ["--max-tokens", String(CAP)],
      });
      const { record, exit } = await waitForRecord(d, 200_000);
      const served = server.requests.filter((r) => r.scenario === SCENARIO && MODEL_ANSWERS.has(r.answer));
      const usage = (record as unknown as { usage?: { input: number; output: number; cachedInput: number } })
        .usage;
      const recorded = (usage?.input ?? 0) + (usage?.output ?? 0);
      const measured = {
        cli,
        at: new Date().toISOString(),
        requests: served.length,
        toolCalls: served.filter((r) => r.answer === "tool-call").length,
        crossingRequest: CROSSING,
        recordedTokens: recorded,
        cachedInput: usage?.cachedInput ?? null,
        servedTokens: served.length * (PER_REQUEST.input + PER_REQUEST.output),
        overshootTokens: recorded - CAP,
        requestsAfterCrossing: served.length - CROSSING,
        secs: record.secs,
        message: record.error?.message ?? null,
      };
      fs.appendFileSync(OUT, `${JSON.stringify(measured)}\n`);
      console.log(JSON.stringify(measured));
      const why = `${JSON.stringify(measured)}\n${diagnostics(d, server)}`;
      expect({ reason: exit.reason, status: record.status, kind: record.error?.kind }, why).toEqual({
        reason: "budget",
        status: "limit",
        kind: "budget",
      });
      expect(record.error?.message, why).toMatch(/^used [\d,]+ tokens of --max-tokens 50000$/);
      // Within one report: the request that crossed, and at most the one the CLI had already sent — its
      // turns, that is: a side request (opencode's title, answered "text") reports no usage and comes
      // whenever the CLI sends it, before the crossing or after.
      const turns = served.filter((r) => r.answer === "tool-call" || r.answer === "final");
      expect(turns.length, why).toBeLessThanOrEqual(CROSSING + 1);
      expect(recorded, why).toBeGreaterThanOrEqual(CAP);
      expect(leftovers(d), why).toEqual([]);
    });
  }
});
