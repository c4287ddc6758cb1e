import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import type { Spec } from "../../src/domain/schemas.js";
import { hostIdentity } from "../../src/infra/host-identity.js";
import { systemFiles } from "../../supervisor/deps.js";
import { resumePoint } from "../../supervisor/resume-point.js";
import { watchAgent } from "../../supervisor/watch-loop.js";
import { FAKE_WALL_ZERO, FakeClock } from "../helpers/fake-clock.js";
import { tempDir } from "../helpers/folders.js";
import { loopSpec, neverExitingChild } from "../helpers/watch.js";

// An adopting supervisor in process, on a fake clock: it starts from what the agent wrote while nobody
// watched, dated when the agent last wrote, with the wall counted from the agent's start.

const wallAt = (mono: number) => new Date(FAKE_WALL_ZERO + mono);
const codexLine = (event: unknown) => `${JSON.stringify(event)}\n`;
const open = (id: string, command: string) =>
  codexLine({ type: "item.started", item: { id, type: "command_execution", command } });
const close = (id: string, command: string) =>
  codexLine({ type: "item.completed", item: { id, type: "command_execution", command } });
const THREAD = codexLine({ type: "thread.started", thread_id: "0199a213-81c0-7800-8aa1-bbab2a035a53" });
const RETRY = codexLine({ type: "error", message: "Reconnecting... 1/5 (stream disconnected)" });

/** A folder whose agent wrote `events` and last wrote at monotonic `wroteAt`. */
function folderWith(events: string, wroteAt: number): string {
  const dir = tempDir();
  for (const file of ["events.jsonl", "stderr.log"]) {
    fs.writeFileSync(path.join(dir, file), file === "events.jsonl" ? events : "");
    fs.utimesSync(path.join(dir, file), wallAt(wroteAt), wallAt(wroteAt));
  }
  return dir;
}

async function adoptAndWatch(dir: string, clock: FakeClock, agentStartedAt: number, limits: Partial<Spec>) {
  const spec = loopSpec(dir, "codex", { pollMs: 250, ...limits });
  const resume = resumePoint(dir, { startedAt: wallAt(agentStartedAt).toISOString() }, clock);
  const outcome = await watchAgent({
    dir,
    spec,
    backend: backendFor("codex"),
    child: neverExitingChild(),
    deps: { clock, files: systemFiles },
    log: () => {},
    interrupt: new AbortController().signal,
    resume,
  });
  return { ...outcome, at: clock.mono, resume };
}

describe("resumePoint", () => {
  it("puts the agent's start and its last write on this supervisor's monotonic clock", () => {
    const dir = folderWith(THREAD, 90_000);
    fs.writeFileSync(path.join(dir, "stall.json"), "{}");
    fs.writeFileSync(
      path.join(dir, "thread.json"),
      JSON.stringify({ schema: 1, thread: "t-1", at: wallAt(1).toISOString() }),
    );
    // The waits for heavy slots that were over when the supervisor died: activity.json kept their total.
    fs.writeFileSync(
      path.join(dir, "activity.json"),
      JSON.stringify({
        schema: 1,
        at: wallAt(80_000).toISOString(),
        lastEvent: null,
        lastEventAt: null,
        openToolCalls: [],
        retrying: 0,
        retries: 0,
        tokens: { input: 0, cached: 0, output: 0 },
        thread: null,
        slotWaitMs: 4200,
      }),
    );
    expect(
      resumePoint(dir, { startedAt: wallAt(50_000).toISOString() }, new FakeClock({ mono: 100_000 })),
    ).toEqual({
      startedAt: 50_000,
      startedAtWall: FAKE_WALL_ZERO + 50_000,
      sinceStart: { ms: 50_000, clock: "wall", why: "no-boot-stamp" },
      linesAt: 90_000,
      stalled: true,
      thread: "t-1",
      slotWaitedMs: 4200,
    });
  });

  it("never dates the lines before the start or after now, nor the start after now", () => {
    const clock = new FakeClock({ mono: 100_000 });
    expect(
      resumePoint(folderWith("", 10_000), { startedAt: wallAt(50_000).toISOString() }, clock).linesAt,
    ).toBe(50_000);
    expect(
      resumePoint(folderWith("", 500_000), { startedAt: wallAt(50_000).toISOString() }, clock).linesAt,
    ).toBe(100_000);
    expect(
      resumePoint(folderWith("", 90_000), { startedAt: wallAt(900_000).toISOString() }, clock),
    ).toMatchObject({
      startedAt: 100_000,
      linesAt: 100_000,
    });
    expect(resumePoint(tempDir(), { startedAt: "not a time" }, clock)).toMatchObject({
      startedAt: 100_000,
      linesAt: 100_000,
    });
  });
});

describe("resumePoint on the boot's clock", () => {
  const HOUR = 3_600_000;
  const bootId = hostIdentity().bootId;
  // The agent started at monotonic 50 s (proc.json's startedMono) and last wrote at 90 s; adopted at 100 s
  // by a supervisor whose wall clock reads `shift` away from the one that wrote proc.json and the files.
  const adoptedWith = (shift: number) => {
    const dir = folderWith(THREAD, 90_000);
    const clock = new FakeClock({ mono: 100_000, wall: FAKE_WALL_ZERO + 100_000 + shift });
    return resumePoint(
      dir,
      { startedAt: wallAt(50_000).toISOString(), startedMono: { bootId, ms: 50_000 } },
      clock,
    );
  };

  it.runIf(bootId !== null).each([
    ["in step", 0],
    ["two hours ahead", 2 * HOUR],
    ["two hours behind", -2 * HOUR],
  ])("counts the start and the last write as they were with the wall clock %s", (_, shift) => {
    expect(adoptedWith(shift)).toMatchObject({
      startedAt: 50_000,
      startedAtWall: FAKE_WALL_ZERO + 50_000,
      sinceStart: { ms: 50_000, clock: "boot" },
      linesAt: shift < 0 ? 100_000 : 90_000,
    });
  });

  it("falls back to the wall clock for a start recorded in another boot", () => {
    const dir = folderWith(THREAD, 90_000);
    const clock = new FakeClock({ mono: 100_000 });
    const resume = resumePoint(
      dir,
      { startedAt: wallAt(50_000).toISOString(), startedMono: { bootId: "another-boot", ms: 99_000 } },
      clock,
    );
    expect(resume).toMatchObject({
      startedAt: 50_000,
      sinceStart: { ms: 50_000, clock: "wall", why: bootId === null ? "no-boot-id" : "another-boot" },
    });
  });
});

describe("an adopted watch", () => {
  it("ends an idle agent on the idle time counted from its last line, not from the adoption", async () => {
    // Started at 50 s, last wrote at 90 s, adopted at 100 s: idle (30 s) is due at 120 s, not 130 s.
    const dir = folderWith(THREAD + open("i1", "ls") + close("i1", "ls"), 90_000);
    const clock = new FakeClock({ mono: 100_000 });
    const out = await adoptAndWatch(dir, clock, 50_000, { idleMs: 30_000, stallMs: 15_000, wallMs: 600_000 });
    expect(out.reason).toBe("idle-timeout");
    expect(out.at).toBe(120_000);
    // The stall notice came at 105 s, 15 s after the last line.
    expect(JSON.parse(fs.readFileSync(path.join(dir, "stall.json"), "utf8"))).toMatchObject({
      at: wallAt(105_000).toISOString(),
    });
  });

  it("ends a busy agent at the wall counted from its start, with the stream state it had", async () => {
    // Started at 50 s, wall 60 s: due at 110 s, however busy, whenever adopted.
    const events = THREAD + open("i1", "ls") + close("i1", "ls") + RETRY + open("i2", "npm test");
    const dir = folderWith(events, 90_000);
    const clock = new FakeClock({ mono: 100_000 });
    const out = await adoptAndWatch(dir, clock, 50_000, { idleMs: 30_000, stallMs: 15_000, wallMs: 60_000 });
    expect(out.reason).toBe("wall-timeout");
    expect(out.at).toBe(110_000);
    expect(out.state).toMatchObject({
      thread: "0199a213-81c0-7800-8aa1-bbab2a035a53",
      totalRetries: 1,
      consecutiveRetries: 0,
      lastEventAt: 90_000,
      startedAt: 50_000,
    });
    expect(out.state.openTools.map((t) => t.id)).toEqual(["i2"]);
    // thread.json is written once, from the backlog, and activity.json dates its tool call at the last write.
    expect(JSON.parse(fs.readFileSync(path.join(dir, "activity.json"), "utf8"))).toMatchObject({
      openToolCalls: [{ id: "i2", openedAt: wallAt(90_000).toISOString() }],
      retries: 1,
    });
  });

  it("does not give a stall notice a second time", async () => {
    const dir = folderWith(THREAD, 90_000);
    fs.writeFileSync(path.join(dir, "stall.json"), JSON.stringify({ schema: 1, at: "then", quietMs: 1 }));
    const out = await adoptAndWatch(dir, new FakeClock({ mono: 100_000 }), 50_000, {
      idleMs: 30_000,
      stallMs: 15_000,
      wallMs: 600_000,
    });
    expect(out.reason).toBe("idle-timeout");
    expect(JSON.parse(fs.readFileSync(path.join(dir, "stall.json"), "utf8")).at).toBe("then");
  });
});
