import { describe, expect, it } from "vitest";
import { isAlive } from "../helpers/processes.js";
import { diagnostics, type LiveCli, leftovers, useLiveRun, waitForRecord } from "./harness.js";
import { FINAL_MARKER, OUTCOME_LINE } from "./mock-model-server.js";

// One contract, run against each real CLI through `catherd dispatch` (specs/live-suite.md). The expected
// verdicts follow specs/record.md's status precedence and specs/supervisor.md's stop rules; where a CLI's own
// behaviour makes them differ, CLI_EXPECTATIONS says so and why.

/** How a failure scenario must end: exit.json's reason, record.json's kind and status, within how long. */
interface FailureEnd {
  reason: "exited" | "provider-unavailable" | "idle-timeout";
  kind: string;
  status: "failed" | "limit" | "timeout";
  /** The record's `secs` is at most this. */
  withinS: number;
  /** The record names when to come back (about an hour on). */
  retryAfter?: boolean;
}

/** The failure scenarios: the mock's refusals (mock-model-server.ts) and a resume of a thread that does not exist. */
type Failure = "auth401" | "ratelimit-long" | "model404" | "context400" | "bogus-thread";

interface Expectations {
  /** What persistent HTTP 500s give: exit.json's reason and record.json's status. */
  always500: { reason: "provider-unavailable" | "exited"; status: "limit" | "failed" };
  /** Whether `sleep 1000 &` from a tool outlives the CLI, so that the supervisor's sweep must kill it. */
  orphanOutlivesCli: boolean;
  failures: Record<Failure, FailureEnd>;
  /** A thread id in the CLI's form that names no session. */
  bogusThread: string;
  /**
   * Steerable, the CLI does not exit at a failed turn (codex's app-server holds its input open): what ends
   * `exited` plainly ends `after-final` — stopped once the conversation is over — with the same verdict.
   */
  steerableStopsAtEnd?: boolean;
  /** Steerable, when persistent HTTP 500s end otherwise than plainly (`always500`); absent: the same. */
  steerableAlways500?: { reason: "idle-timeout"; status: "timeout" };
}

const UUID_NOBODY_HAS = "7d4e1c2a-0b3f-4a5e-9c8d-2f1e0a9b8c7d";

export const CLI_EXPECTATIONS: Record<LiveCli, Expectations> = {
  // codex prints each retry round on stdout ({"type":"error","message":"Reconnecting... n/5"}): the
  // supervisor counts 3 in a row (rule 5) → provider-unavailable → limit, before codex gives up itself.
  // codex kills what its tools left running when it exits.
  codex: {
    always500: { reason: "provider-unavailable", status: "limit" },
    orphanOutlivesCli: false,
    failures: {
      // Its first retry names the 401: the supervisor ends it at once (codex would retry 5 times).
      auth401: { reason: "provider-unavailable", kind: "auth", status: "failed", withinS: 15 },
      // One retry line for the 429, then codex waits out the Retry-After in silence: the retry was the
      // last sign of life when the idle limit comes.
      "ratelimit-long": { reason: "idle-timeout", kind: "rate-limit", status: "limit", withinS: 40 },
      model404: { reason: "exited", kind: "model", status: "failed", withinS: 15 },
      context400: { reason: "exited", kind: "context", status: "failed", withinS: 15 },
      "bogus-thread": { reason: "exited", kind: "resume", status: "failed", withinS: 15 },
    },
    bogusThread: UUID_NOBODY_HAS,
    steerableStopsAtEnd: true,
  },
  // claude prints each retry as system/api_retry: 3 in a row → provider-unavailable → limit.
  // claude leaves a tool's background process behind (reparented to init).
  claude: {
    always500: { reason: "provider-unavailable", status: "limit" },
    orphanOutlivesCli: true,
    failures: {
      // Its first system/api_retry names the 401: ended at once (claude would retry for minutes).
      auth401: { reason: "provider-unavailable", kind: "auth", status: "failed", withinS: 15 },
      // A 429 with a long Retry-After is not retried: the result says it, with the reset time.
      "ratelimit-long": {
        reason: "exited",
        kind: "rate-limit",
        status: "limit",
        withinS: 15,
        retryAfter: true,
      },
      model404: { reason: "exited", kind: "model", status: "failed", withinS: 15 },
      context400: { reason: "exited", kind: "context", status: "failed", withinS: 15 },
      "bogus-thread": { reason: "exited", kind: "resume", status: "failed", withinS: 15 },
    },
    bogusThread: UUID_NOBODY_HAS,
  },
  // gemini prints its retries on stderr only ("Attempt n failed with status 500. Retrying with backoff…",
  // parsed by parseStderr): 3 in a row (about 20 s) → provider-unavailable → limit.
  gemini: {
    always500: { reason: "provider-unavailable", status: "limit" },
    orphanOutlivesCli: true,
    failures: {
      auth401: { reason: "exited", kind: "auth", status: "failed", withinS: 20 },
      // A retry delay over 300 s is terminal for gemini: it says "retry in 3600s".
      "ratelimit-long": {
        reason: "exited",
        kind: "rate-limit",
        status: "limit",
        withinS: 20,
        retryAfter: true,
      },
      model404: { reason: "exited", kind: "model", status: "failed", withinS: 20 },
      context400: { reason: "exited", kind: "context", status: "failed", withinS: 20 },
      "bogus-thread": { reason: "exited", kind: "resume", status: "failed", withinS: 20 },
    },
    bogusThread: UUID_NOBODY_HAS,
    // Over ACP gemini answers a failed prompt and waits for the next: stopped once the conversation is over.
    steerableStopsAtEnd: true,
    // Over ACP gemini 0.61.0 holds its stderr until it exits: its retries are not seen while it runs, and a
    // provider that keeps failing ends at the idle limit.
    steerableAlways500: { reason: "idle-timeout", status: "timeout" },
  },
  // opencode retries silently (nothing on stdout or stderr), then prints one `error` line (APIError 500)
  // and exits 1. The supervisor cannot see a retry, so rule 5 never fires; the record follows the exit:
  // exited → the terminal error's statusCode 500 proves provider-down → limit.
  opencode: {
    always500: { reason: "exited", status: "limit" },
    orphanOutlivesCli: true,
    failures: {
      auth401: { reason: "exited", kind: "auth", status: "failed", withinS: 30 },
      // opencode waits out any Retry-After without a word on stdout or stderr: nothing tells the
      // supervisor it is the provider's silence, so the idle limit ends it as a plain timeout.
      "ratelimit-long": { reason: "idle-timeout", kind: "timeout", status: "timeout", withinS: 40 },
      model404: { reason: "exited", kind: "model", status: "failed", withinS: 30 },
      context400: { reason: "exited", kind: "context", status: "failed", withinS: 30 },
      "bogus-thread": { reason: "exited", kind: "resume", status: "failed", withinS: 30 },
    },
    bogusThread: "ses_dd2f8c1b9ffe61TIhHsywNFVw1",
  },
};

/**
 * The contract's cases for one CLI. `steerable`: every dispatch is started `--steerable` (specs/steering.md):
 * the same cases must end the same over the steerable transport, which is what makes it a default.
 * `sandboxed`: every dispatch runs in `--sandbox files+net` with only the mock model's port allowed
 * (specs/sandbox.md): a sandbox must not change how a run ends.
 */
export function defineContract(
  cli: LiveCli,
  options: { steerable?: boolean; sandboxed?: boolean } = {},
): void {
  const steer = options.steerable === true ? ["--steerable"] : [];
  const how = [
    ...(steer.length > 0 ? ["steerable"] : []),
    ...(options.sandboxed === true ? ["sandboxed"] : []),
  ];
  describe(`${cli} (real CLI, through catherd dispatch${how.map((h) => `, ${h}`).join("")})`, () => {
    // Whatever happened, nothing the test started outlives it. Folders of failed tests are kept.
    const live = useLiveRun([cli], { sandboxed: options.sandboxed === true });
    const expectations = CLI_EXPECTATIONS[cli];

    it("a tool call, then an answer → ok, with tokens and the reply", async () => {
      const d = await live.run.dispatch(cli, "tool", { idle: "60s", flags: steer });
      const { record, exit } = await waitForRecord(d, 90_000);
      const why = diagnostics(d, live.run.server);
      expect(record.status, why).toBe("ok");
      expect(["exited", "after-final"], why).toContain(record.reason);
      expect(exit.sawFinal, why).toBe(true);
      expect(record.thread, why).not.toBeNull();
      expect(record.tokens.input, why).toBeGreaterThan(0);
      expect(record.tokens.output, why).toBeGreaterThan(0);
      // The mock's final text carries the tool's output as the CLI reported it: the tool really ran.
      expect(record.reply ?? "", why).toContain(FINAL_MARKER);
      expect(record.reply ?? "", why).toMatch(/\bhi\b/);
      expect(
        live.run.server.requests.map((r) => r.answer),
        why,
      ).toEqual(expect.arrayContaining(["tool-call", "final"]));
      expect(leftovers(d), why).toEqual([]);
    });

    it("--outcome: the final answer ends with a STATUS line → ok, and the record has the outcome", async () => {
      const d = await live.run.dispatch(cli, "outcome", { idle: "60s", flags: ["--outcome", ...steer] });
      const { record } = await waitForRecord(d, 90_000);
      const why = diagnostics(d, live.run.server);
      expect(record.status, why).toBe("ok");
      expect(record.reply ?? "", why).toContain(OUTCOME_LINE);
      expect(record.outcome, why).toEqual({
        status: "partial",
        why: OUTCOME_LINE.slice(OUTCOME_LINE.indexOf("— ") + 2),
      });
      expect(leftovers(d), why).toEqual([]);
    });

    const always500 =
      (steer.length > 0 ? expectations.steerableAlways500 : undefined) ?? expectations.always500;
    it(`persistent HTTP 500s → ${always500.status} (${always500.reason})`, async () => {
      // A long idle: retries are never progress, and gemini's retries are 5, 10, 20 s apart (with jitter);
      // its fourth attempt comes about 40 s in, and may be needed (see specs/live-suite.md).
      const d = await live.run.dispatch(cli, "always500", { idle: "90s", flags: steer });
      const { record, exit } = await waitForRecord(d, 130_000);
      const why = diagnostics(d, live.run.server);
      expect(exit.reason, why).toBe(always500.reason);
      expect(record.status, why).toBe(always500.status);
      if (always500.reason === "provider-unavailable") {
        expect(exit.retries, why).toBeGreaterThanOrEqual(3);
        expect(exit.stop.term, why).toBe(true);
      } else if (always500.reason === "exited") {
        expect(record.error?.message ?? "", why).toMatch(/500|internal error/i);
      }
      expect(live.run.server.requests.filter((r) => r.answer === "500").length, why).toBeGreaterThan(1);
      expect(leftovers(d), why).toEqual([]);
    });

    it("a request that never answers → idle-timeout, stopped, nothing left", async () => {
      // 20 s: long enough for the slowest CLI to reach its first request on a loaded 2-core machine
      // (opencode alone takes 4-5 s to start), shorter than every CLI's own request timeout (claude's
      // API_TIMEOUT_MS is set to 60 s, gemini's is about 60 s, opencode's 300 s, codex has none).
      const d = await live.run.dispatch(cli, "hang", { idle: "20s", killGrace: "3s", flags: steer });
      const { record, exit } = await waitForRecord(d, 60_000);
      const why = diagnostics(d, live.run.server);
      expect(exit.reason, why).toBe("idle-timeout");
      expect(record.status, why).toBe("timeout");
      expect(exit.stop.term, why).toBe(true);
      expect(
        live.run.server.requests.some((r) => r.answer === "hang"),
        why,
      ).toBe(true);
      expect(leftovers(d), why).toEqual([]);
    });

    for (const [failure, end] of Object.entries(expectations.failures) as [Failure, FailureEnd][]) {
      it(`${failure} → ${end.status}: ${end.kind} (${end.reason}) within ${end.withinS} s, nothing left`, async () => {
        const scenario = failure === "bogus-thread" ? "text" : failure;
        const thread = failure === "bogus-thread" ? expectations.bogusThread : undefined;
        // The idle limit ends only the scenarios whose CLI goes quiet (a long Retry-After waited out);
        // the others end by the CLI's own exit or the retry rule, and a CLI slow to start on a loaded
        // machine must not turn them into a timeout first. Each must still end within its bound.
        const d = await live.run.dispatch(cli, scenario, {
          idle: end.reason === "idle-timeout" ? "20s" : "60s",
          killGrace: "3s",
          flags: steer,
          ...(thread === undefined ? {} : { thread }),
        });
        const { record, exit } = await waitForRecord(d, 90_000);
        const why = diagnostics(d, live.run.server);
        const stops =
          steer.length > 0 && expectations.steerableStopsAtEnd === true && end.reason === "exited";
        expect(exit.reason, why).toBe(stops ? "after-final" : end.reason);
        expect(record.status, why).toBe(end.status);
        expect(record.error?.kind, why).toBe(end.kind);
        expect(record.error?.message ?? "", why).not.toBe("");
        expect(record.secs, why).toBeLessThanOrEqual(end.withinS);
        if (end.retryAfter === true) {
          const back = Date.parse(record.error?.retryAfter ?? "") - Date.now();
          expect(back, `${why}\nretryAfter ${record.error?.retryAfter}`).toBeGreaterThan(50 * 60_000);
          expect(back, why).toBeLessThan(61 * 60_000);
        }
        expect(leftovers(d), why).toEqual([]);
      });
    }

    it("a tool that leaves `sleep 1000 &` behind → ok, and nothing left running", async () => {
      const d = await live.run.dispatch(cli, "orphan", { idle: "60s", flags: steer });
      const { record, exit } = await waitForRecord(d, 90_000);
      const why = diagnostics(d, live.run.server);
      expect(record.status, why).toBe("ok");
      // The command echoes the background sleep's pid, and the final text carries it: it existed.
      const pid = Number(/started (\d+)/.exec(record.reply ?? "")?.[1] ?? Number.NaN);
      expect(pid, why).toBeGreaterThan(1);
      expect(leftovers(d), why).toEqual([]);
      if (options.sandboxed === true) {
        // Inside the sandbox the pid is one of its own PID namespace (meaningless on the host), and the
        // namespace ends with its agent (specs/sandbox.md, "Processes"): nothing is left for the sweep.
        expect(exit.stop.swept, why).toBe(0);
        return;
      }
      expect(isAlive(pid), `${why}\nsleep ${pid} is still alive`).toBe(false);
      // A CLI that exits leaves the sleep to the sweep; one the supervisor stops (a steerable CLI that
      // never ends by itself) takes it along in the stop's cgroup kill.
      const stopped = steer.length > 0 && expectations.steerableStopsAtEnd === true;
      if (expectations.orphanOutlivesCli && !stopped) expect(exit.stop.swept, why).toBeGreaterThanOrEqual(1);
    });
  });
}
