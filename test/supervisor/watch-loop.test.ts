import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import type { Spec } from "../../src/domain/schemas.js";
import { lockReportPath, writeLockReport } from "../../src/folder/lock-reports.js";
import { startTimeOf } from "../../src/infra/process-identity.js";
import { systemFiles } from "../../supervisor/deps.js";
import { SLOT_RECHECK_MS } from "../../supervisor/slot-reports.js";
import { QUIET_POLL_MS, watchAgent } from "../../supervisor/watch-loop.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { tempDir } from "../helpers/folders.js";
import { loopSpec, neverExitingChild, watchUntilStopped } from "../helpers/watch.js";

// When the loop polls: with a fake clock that records every sleep and lets a test write output at given
// times, as if the agent had (test/helpers/fake-clock.ts). A quiet agent must cost wake-ups at deadlines and every QUIET_POLL_MS only.

const LIMITS: Partial<Spec> = { idleMs: 20_000, wallMs: 60_000, stallMs: 10_000, pollMs: 250 };

async function watch(dir: string, clock: FakeClock, overrides: Partial<Spec> = {}) {
  const reason = await watchUntilStopped(dir, clock, loopSpec(dir, "exec", { ...LIMITS, ...overrides }));
  return { reason, at: clock.mono, sleeps: clock.sleeps };
}

describe("the watch loop's sleeps", () => {
  it("wakes a silent agent only at its deadlines and the safety poll: stall at 40 s, idle at 80 s", async () => {
    const dir = tempDir();
    const { reason, at, sleeps } = await watch(dir, new FakeClock(), {
      idleMs: 80_000,
      stallMs: 40_000,
      wallMs: 600_000,
    });
    expect(reason).toBe("idle-timeout");
    expect(at).toBe(80_000);
    expect(QUIET_POLL_MS).toBe(30_000);
    expect(sleeps).toEqual([30_000, 10_000, 30_000, 10_000]);
    expect(fs.existsSync(path.join(dir, "stall.json"))).toBe(true);
  });

  it("sleeps exactly to a deadline that comes before the safety poll", async () => {
    const { reason, at, sleeps } = await watch(tempDir(), new FakeClock(), {
      idleMs: 1200,
      stallMs: 700,
    });
    expect(reason).toBe("idle-timeout");
    expect(at).toBe(1200);
    expect(sleeps).toEqual([700, 500]);
  });

  it("polls every pollMs while output flows, then goes back to sleeping long", async () => {
    const dir = tempDir();
    const events = path.join(dir, "events.jsonl");
    const writes = new Map<number, () => void>();
    for (let t = 100; t <= 1000; t += 100) writes.set(t, () => fs.appendFileSync(events, `line ${t}\n`));
    const { reason, at, sleeps } = await watch(
      dir,
      new FakeClock({ events: [...writes].map(([at, happen]) => ({ at, happen })) }),
      {
        idleMs: 8000,
        stallMs: 4000,
      },
    );
    expect(reason).toBe("idle-timeout");
    // First a quiet sleep to the stall deadline (4 s) cut by nothing: the fake clock does not wake early,
    // so the writes of 100–1000 ms are all read at 4 s; then output was read: one pollMs; then quiet.
    expect(sleeps.slice(0, 2)).toEqual([4000, 250]);
    expect(sleeps.slice(2).every((ms) => ms > 250)).toBe(true);
    // Progress was last read at 4 s: idle fires 8 s later.
    expect(at).toBe(12_000);
  });
});

describe("the watch loop's sleeps, one sensor among others", () => {
  it("looks again every SLOT_RECHECK_MS while a lock's report is live, though the rules could wait longer", async () => {
    const dir = tempDir();
    // This test process stands for a lock of the dispatch (alive, by pid and start time), waiting for a slot.
    const pid = process.pid;
    const startTime = startTimeOf(pid);
    writeLockReport(lockReportPath(dir, pid, startTime), {
      pid,
      startTime,
      class: "heavy",
      label: "npm test",
      state: "waiting",
      since: "2026-11-29T08:00:00.000Z",
      ahead: 0,
      held: 1,
      slots: 1,
      waitedMs: 0,
    });
    const interrupt = new AbortController();
    const clock = new FakeClock([{ at: 3500, happen: () => interrupt.abort("SIGTERM") }]);
    const spec = loopSpec(dir, "exec", LIMITS);
    const outcome = await watchAgent({
      dir,
      spec,
      backend: backendFor("exec"),
      child: neverExitingChild(),
      deps: { clock, files: systemFiles },
      log: () => {},
      interrupt: interrupt.signal,
    });
    // The wait stops the wall and keeps the agent busy: the rules' next deadline is the idle limit, 20 s
    // away; the signal cuts the fourth sleep short.
    expect(SLOT_RECHECK_MS).toBe(1000);
    expect(clock.sleeps).toEqual([1000, 1000, 1000, 1000]);
    expect({ reason: outcome.reason, at: clock.mono }).toEqual({ reason: "cancelled", at: 3500 });
    expect(outcome.state.slotWaitedMs).toBe(3500);
  });
});

describe("quota.json, written by the loop", () => {
  it("is written once per look however many reports the look read: a backlog of 300 is one write", async () => {
    const dir = tempDir();
    // What an adopter meets: a stream that reported the same window again and again (a rate_limit_event
    // per answer of a long run), read whole in its first look.
    const events = Array.from({ length: 300 }, (_, i) =>
      JSON.stringify({
        type: "rate_limit_event",
        rate_limit_info: { status: "allowed_warning", rateLimitType: "five_hour", utilization: i / 1000 },
      }),
    );
    fs.writeFileSync(path.join(dir, "events.jsonl"), `${events.join("\n")}\n`);
    const writes: string[] = [];
    const files = {
      ...systemFiles,
      writeJson: (file: string, value: unknown) => {
        writes.push(path.basename(file));
        systemFiles.writeJson(file, value);
      },
    };
    const outcome = await watchAgent({
      dir,
      spec: loopSpec(dir, "claude-code", LIMITS),
      backend: backendFor("claude-code"),
      child: neverExitingChild(),
      deps: { clock: new FakeClock(), files },
      log: () => {},
      interrupt: new AbortController().signal,
    });
    expect(outcome.reason).toBe("idle-timeout");
    expect(writes.filter((f) => f === "quota.json")).toHaveLength(1);
    const quota = JSON.parse(fs.readFileSync(path.join(dir, "quota.json"), "utf8"));
    expect(quota.windows).toEqual([
      expect.objectContaining({ limit: "claude", window: "five_hour", usedPercent: 29.9, status: "warning" }),
    ]);
  });
});
