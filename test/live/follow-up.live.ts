import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dispatchedOf, runCli } from "../helpers/cli.js";
import {
  checkPrerequisites,
  diagnostics,
  dispatcherEnv,
  type LiveCli,
  type LiveDispatch,
  LiveRun,
  leftovers,
  waitForRecord,
} from "./harness.js";
import { FINAL_MARKER, type MockModelServer, startMockModelServer } from "./mock-model-server.js";

// `dispatch --follow-up` against each real CLI (specs/live-suite.md, "follow-up"): a first turn on the
// mock's text scenario, then a follow-up of it by name; the CLI resumes its thread, so the request the
// mock gets for the follow-up carries the earlier turn — the first brief and the mock's own answer — beside
// the new question. Every request's body is dumped (the mock's dumpDir) and read back.

const QUESTION = "FOLLOW-UP-QUESTION: what did you answer before?";
const FIRST_BRIEF = "Run the scripted command, then report what it printed.";

let server: MockModelServer;
let run: LiveRun;
let dumpDir: string;
beforeEach(async () => {
  dumpDir = fs.mkdtempSync(path.join(os.tmpdir(), "catherd-live-follow-up-dump-"));
  server = await startMockModelServer({ quiet: true, dumpDir });
  run = new LiveRun(server);
});

// A failed test keeps its folders (and its dumps). Read from the task's result: vitest runs onTestFailed
// handlers only after the afterEach hooks, too late for the reap.
afterEach(async (context) => {
  const failed = context.task.result?.state === "fail";
  await run.reap(failed);
  if (!failed) fs.rmSync(dumpDir, { recursive: true, force: true });
});

/** The bodies of the requests dumped after the first `skip`, as text. */
function bodiesAfter(skip: number): string[] {
  return fs
    .readdirSync(dumpDir)
    .sort()
    .slice(skip)
    .map((f) =>
      JSON.stringify((JSON.parse(fs.readFileSync(path.join(dumpDir, f), "utf8")) as { body: unknown }).body),
    );
}

describe("the real CLIs followed up by name", () => {
  for (const cli of ["codex", "claude", "gemini", "opencode"] as LiveCli[]) {
    it(`${cli}: a follow-up resumes the first turn's thread, and the mock sees the earlier turn in its request`, async () => {
      checkPrerequisites(cli);
      const first = await run.dispatch(cli, "text", { idle: "90s", wall: "4m" });
      const { record } = await waitForRecord(first, 200_000);
      expect(record.status, diagnostics(first, server)).toBe("ok");
      expect(record.thread, diagnostics(first, server)).toEqual(expect.any(String));
      const before = fs.readdirSync(dumpDir).length;

      const env = dispatcherEnv(path.join(first.root, "catherd-home"));
      const name = `${cli}-text`;
      const result = await runCli(["dispatch", "--follow-up", name, "--brief", QUESTION, "--json"], {
        env,
        cwd: path.join(first.root, "work"),
        timeoutMs: 60_000,
      });
      expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
      const second: LiveDispatch = { cli, scenario: "text", ...dispatchedOf(result), root: first.root };
      run.dispatches.push(second);
      const again = await waitForRecord(second, 200_000);
      const why = diagnostics(second, server);
      expect(again.record.status, why).toBe("ok");
      expect(again.record.thread, why).toBe(record.thread);
      const admit = JSON.parse(fs.readFileSync(path.join(second.dir, "admit.json"), "utf8"));
      expect(admit.followUpOf, why).toBe(first.dispatchId);

      // One request of the follow-up holds the new question with the earlier turn: the first brief and
      // the mock's answer to it.
      const carrying = bodiesAfter(before).filter((b) => b.includes("FOLLOW-UP-QUESTION"));
      expect(carrying.length, why).toBeGreaterThan(0);
      const withHistory = carrying.filter((b) => b.includes(FIRST_BRIEF) && b.includes(FINAL_MARKER));
      expect(
        withHistory.length,
        `${why}\n${carrying.map((b) => b.slice(0, 2000)).join("\n---\n")}`,
      ).toBeGreaterThan(0);
      expect(leftovers(first), why).toEqual([]);
      expect(leftovers(second), why).toEqual([]);
    });
  }
});
