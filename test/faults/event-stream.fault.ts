import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { allBackends } from "../../src/backends/backend-registry.js";
import type { Backend } from "../../src/backends/types.js";
import { addFacts, emptySummary } from "../../src/domain/ending/summary.js";
import { accounts, TOKEN_FIELDS, totalOf } from "../../src/domain/spend/usage.js";
import { EXIT_REASONS, STATUSES } from "../../src/domain/vocab.js";
import { initialWatch, observe } from "../../src/domain/watch/watch.js";
import { type FakeScenario, fakeAgentFolder, readJson, startSupervisor } from "../helpers/folders.js";
import { waitForFile } from "../helpers/wait.js";
import { Fuzzer, soundOutcome, wellFormed } from "./fuzz.js";
import { heavy, superviseMeasured, trial, useFaultKit } from "./kit.js";

// Row 4: the event stream. Fuzzed lines through every backend's parse and through real supervisors; the
// file truncated, replaced and deleted mid-run. Nothing crashes, the outcome is right, memory is bounded.

useFaultKit();

/** Lines through every backend's parse; a real supervisor's stream holds half as many, and two 20 MB lines. */
const FUZZ_LINES = 100_000;
const STREAM_LINES = 50_000;
/**
 * A generous bound on a supervisor's peak RSS (VmHWM) whatever the stream: lines are capped at 16 MiB and
 * read in 1 MiB bites (about 60 MB for an idle supervisor, 190-240 MB measured under the fuzz streams).
 */
const PEAK_RSS_BOUND_KB = 384 * 1024;

/** The final, unterminated line of each backend's fuzz stream: it names the thread "fuzz-tail". */
const TAIL: Record<string, string> = {
  codex: '{"type":"thread.started","thread_id":"fuzz-tail"}',
  "claude-code": '{"type":"system","subtype":"init","session_id":"fuzz-tail"}',
  gemini: '{"type":"init","session_id":"fuzz-tail"}',
  opencode: '{"type":"step_start","sessionID":"fuzz-tail","part":{"type":"step-start"}}',
  exec: "the last line, without a newline",
};

/**
 * Whether a line leaves the run's ending to the agent's exit: no provider retry or error (a refusal or a
 * retry streak stops the agent by rule 5, which `watch.test.ts` tables) and no final result (rule 4). A
 * stream holding one would end as `provider-unavailable` or `after-final` whenever the supervisor reads it
 * before the agent has exited, which is a matter of machine speed.
 */
function leavesEndingToExit(backend: Backend, line: Buffer): boolean {
  const facts = backend.parse(line.toString("utf8"));
  return facts.retry === undefined && facts.error === undefined && facts.final === undefined;
}

/** A fuzz stream of `lines` hostile lines, two 20 MB lines, CRLF, and an unterminated last line. */
function writeFuzzStream(backend: Backend, file: string, seed: number, lines: number, tail: string): number {
  const fuzz = new Fuzzer(seed);
  const fd = fs.openSync(file, "w");
  let bytes = 0;
  const put = (b: Buffer) => {
    fs.writeSync(fd, b);
    bytes += b.length;
  };
  for (let i = 0; i < lines; i++) {
    let line = fuzz.lineBytes();
    while (!leavesEndingToExit(backend, line)) line = fuzz.lineBytes();
    put(line);
    put(Buffer.from(i % 97 === 0 ? "\r\n" : "\n"));
    if (i === Math.floor(lines / 3) || i === Math.floor((2 * lines) / 3)) {
      put(Buffer.alloc(20 * 1024 * 1024, i % 2 === 0 ? 0x61 : 0xff));
      put(Buffer.from("\n"));
    }
  }
  put(Buffer.from(tail));
  fs.closeSync(fd);
  return bytes;
}

describe("row 4: the event stream", () => {
  it("feeds 100k fuzzed lines to every backend's parse and finalize: nothing throws, every fact is sound", () => {
    const t = trial("4 fuzzed lines through every backend's parse (lines x backends)", { many: true });
    const fuzz = new Fuzzer(20_261_129);
    const backends = allBackends();
    const summaries = new Map(backends.map((b) => [b.id, emptySummary()]));
    const states = new Map(backends.map((b) => [b.id, initialWatch(0)]));
    const failures: string[] = [];
    for (let i = 0; i < FUZZ_LINES; i++) {
      const line = fuzz.lineText();
      for (const backend of backends) {
        t.tally.tried += 1;
        try {
          const facts = backend.parse(line);
          const stderrFacts = backend.parseStderr?.(line) ?? facts;
          const problem = wellFormed(facts) ?? wellFormed(stderrFacts);
          if (problem !== null) {
            failures.push(`${backend.id} line ${i}: ${problem}: ${line.slice(0, 160)}`);
            continue;
          }
          const summary = summaries.get(backend.id) ?? emptySummary();
          const before = totalOf(accounts(summary.usage));
          addFacts(summary, facts);
          // Hostile usage (negative, NaN, absurd, decreasing, of the wrong type) is ignored: a total never
          // goes down or below zero.
          const after = totalOf(accounts(summary.usage));
          const lowered = TOKEN_FIELDS.find((k) => after[k] < before[k] || after[k] < 0);
          if (lowered !== undefined) {
            failures.push(
              `${backend.id} line ${i}: ${lowered} went from ${before[lowered]} to ${after[lowered]}`,
            );
            continue;
          }
          states.set(backend.id, observe(states.get(backend.id) ?? initialWatch(0), facts, i));
          t.tally.passed += 1;
        } catch (error) {
          failures.push(`${backend.id} line ${i} threw ${String(error)}: ${line.slice(0, 160)}`);
        }
      }
    }
    for (const backend of backends) {
      for (const reason of EXIT_REASONS) {
        const outcome = backend.finalize(summaries.get(backend.id) ?? emptySummary(), {
          reason,
          code: 0,
          signal: null,
        });
        expect(STATUSES).toContain(outcome.status);
        expect(soundOutcome(outcome)).toBeNull();
        const t = outcome.usage.total;
        expect(Number.isFinite(t.input + t.cachedInput + t.output)).toBe(true);
      }
    }
    expect(failures.slice(0, 10)).toEqual([]);
  });

  for (const backend of allBackends()) {
    it(`survives 50k fuzzed lines, two 20 MB lines and no final newline under a real ${backend.id} supervisor, in bounded memory`, async () => {
      const t = trial("4 fuzzed stream through a real supervisor (one per backend)");
      await heavy(t);
      const parent = t.dir();
      const stream = path.join(parent, "fuzz.bin");
      const tail = TAIL[backend.id] ?? "tail";
      const bytes = writeFuzzStream(backend, stream, 7 + backend.id.length, STREAM_LINES, tail);
      const { dir, id } = fakeAgentFolder(
        { steps: [] },
        { backend: backend.id, cmd: "/bin/cat", args: [stream], idleMs: 120_000, pollMs: 50 },
        parent,
      );
      t.dispatch(id);
      const { code, hwmKb } = await superviseMeasured(t, dir);
      expect(code).toBe(0);
      expect(fs.statSync(path.join(dir, "events.jsonl")).size).toBe(bytes);
      const exit = readJson(path.join(dir, "exit.json"));
      expect(exit).toMatchObject({ reason: "exited", code: 0, error: null });
      if (backend.id !== "exec") expect(exit.thread).toBe("fuzz-tail");
      const record = readJson(path.join(dir, "record.json"));
      expect(STATUSES).toContain(record.status);
      expect(fs.readFileSync(path.join(dir, "supervisor.log"), "utf8")).toContain('"event":"line-dropped"');
      expect(hwmKb, `peak RSS ${hwmKb} kB`).toBeLessThan(PEAK_RSS_BOUND_KB);
      t.note(`${backend.id} peak RSS ${Math.round(hwmKb / 1024)} MB`);
      t.pass();
    });
  }

  it("keeps its peak memory flat whatever the length of the stream: 25 MB or 250 MB of events", async () => {
    const t = trial("4 peak memory flat over stream length (25 MB vs 250 MB)");
    await heavy(t);
    const parent = t.dir();
    const lines = path.join(parent, "lines.jsonl");
    const fd = fs.openSync(lines, "w");
    for (let i = 0; i < 100_000; i++) {
      const text = "x".repeat((i * 7919) % 400);
      fs.writeSync(
        fd,
        `${JSON.stringify({ type: "item.completed", item: { id: `i${i}`, type: "agent_message", text } })}\n`,
      );
    }
    fs.closeSync(fd);
    const peak = async (times: number) => {
      const { dir, id } = fakeAgentFolder(
        { steps: [] },
        {
          backend: "codex",
          cmd: "/bin/sh",
          args: ["-c", `for i in $(seq ${times}); do cat '${lines}'; done`],
          pollMs: 50,
        },
        parent,
      );
      t.dispatch(id);
      const { code, hwmKb } = await superviseMeasured(t, dir);
      expect(code).toBe(0);
      expect(readJson(path.join(dir, "record.json"))).toMatchObject({
        status: "ok",
        reply: expect.any(String),
      });
      return hwmKb;
    };
    const short = await peak(1);
    const long = await peak(10);
    t.note(`peak RSS ${Math.round(short / 1024)} MB for 25 MB, ${Math.round(long / 1024)} MB for 250 MB`);
    expect(long, `peak ${long} kB for 250 MB vs ${short} kB for 25 MB`).toBeLessThan(short + 64 * 1024);
    t.pass();
  });

  it("keeps up with a streamed reply that goes on past the reply cap (1.1M characters, then 30k deltas)", async () => {
    const t = trial("4 streamed reply past the 1M-character cap");
    const parent = t.dir();
    const stream = path.join(parent, "reply.jsonl");
    const delta = (text: string) =>
      `${JSON.stringify({ type: "message", role: "assistant", content: text, delta: true })}\n`;
    const fd = fs.openSync(stream, "w");
    fs.writeSync(fd, delta("r".repeat(1_100_000)));
    for (let i = 0; i < 30_000; i++) fs.writeSync(fd, delta(`more ${i} `));
    fs.writeSync(fd, `${JSON.stringify({ type: "result", status: "success", stats: {} })}\n`);
    fs.closeSync(fd);
    const { dir, id } = fakeAgentFolder(
      { steps: [] },
      { backend: "gemini", cmd: "/bin/cat", args: [stream], pollMs: 50 },
      parent,
    );
    t.dispatch(id);
    const started = Date.now();
    const { code, cpuSecs } = await superviseMeasured(t, dir);
    const secs = (Date.now() - started) / 1000;
    t.note(`${secs.toFixed(1)} s, ${cpuSecs.toFixed(1)} s of CPU`);
    expect(code).toBe(0);
    const record = readJson(path.join(dir, "record.json"));
    expect(record).toMatchObject({ status: "ok" });
    expect(String(record.reply).endsWith("[reply cut by catherd]")).toBe(true);
    // Copying the cut reply on every delta took 21 s here; skipping it takes well under one. Judged on the
    // supervisor's CPU time: its wall time reached 15 s once, beside a hundred dispatches booting.
    expect(cpuSecs).toBeLessThan(5);
    t.pass();
  });

  const midRun: { name: string; act: (events: string) => void; expectThread: string | null }[] = [
    {
      name: "truncated",
      act: (events) => fs.truncateSync(events, 0),
      expectThread: "after-truncate",
    },
    {
      name: "replaced",
      act: (events) => {
        fs.writeFileSync(`${events}.new`, '{"type":"thread.started","thread_id":"replacement"}\n');
        fs.renameSync(`${events}.new`, events);
      },
      expectThread: "replacement",
    },
    {
      name: "deleted",
      act: (events) => fs.rmSync(events),
      expectThread: "before",
    },
  ];
  for (const m of midRun) {
    it(`keeps watching when events.jsonl is ${m.name} mid-run, and ends with the right outcome`, async () => {
      const t = trial(`4 events.jsonl ${m.name} mid-run`);
      const parent = t.dir();
      const wrote = path.join(parent, "wrote");
      const go = path.join(parent, "go");
      const scenario: FakeScenario = {
        // The thread line comes last before the pause: once thread.json names it, the supervisor has read
        // everything written so far, so the file it then loses is shorter than what it had read (a
        // truncation followed by more bytes than were read looks like an append, to anyone).
        steps: [
          { chatter: { lines: 50, everyMs: 0 } },
          { out: '{"type":"thread.started","thread_id":"before"}' },
          { touch: wrote },
          { waitFor: go },
          { out: '{"type":"thread.started","thread_id":"after-truncate"}' },
          { sleep: 200 },
          { exit: 0 },
        ],
      };
      const { dir, id } = fakeAgentFolder(scenario, { backend: "codex" }, parent);
      t.dispatch(id);
      const run = startSupervisor(dir);
      t.pid(run.child.pid);
      await waitForFile(wrote);
      // Let the supervisor read what was written before the file is pulled from under it.
      await waitForFile(path.join(dir, "thread.json"));
      m.act(path.join(dir, "events.jsonl"));
      fs.writeFileSync(go, "go");
      expect((await run.done).code).toBe(0);
      const exit = readJson(path.join(dir, "exit.json"));
      expect(exit).toMatchObject({ reason: "exited", code: 0 });
      expect(exit.thread).toBe(m.expectThread);
      expect(fs.existsSync(path.join(dir, "record.json"))).toBe(true);
      if (m.name !== "truncated") {
        expect(fs.readFileSync(path.join(dir, "supervisor.log"), "utf8")).toContain(
          '"event":"file-restarted"',
        );
      }
      t.pass();
    });
  }
});
