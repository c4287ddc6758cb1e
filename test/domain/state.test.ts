import { describe, expect, it } from "vitest";
import {
  type DispatchObservation,
  dispatchState,
  readerDuty,
  waitsUnpromoted,
} from "../../src/domain/state/state.js";

const base: DispatchObservation = {
  hasRecord: false,
  hasExit: false,
  hasSupervisor: false,
  supervisorAlive: false,
  agentAlive: false,
  cancelRequested: false,
  dispatcherAlive: false,
  ageMs: 0,
  queue: "no",
};

describe("dispatchState", () => {
  const cases: [string, Partial<DispatchObservation>, string][] = [
    ["admitted, supervisor not yet seen, within the grace", { ageMs: 1000 }, "starting"],
    ["admitted, supervisor never seen after the grace", { ageMs: 60_000 }, "lost"],
    [
      "admitted long ago, its dispatcher still waiting for the supervisor",
      { ageMs: 60_000, dispatcherAlive: true },
      "starting",
    ],
    ["supervisor alive", { hasSupervisor: true, supervisorAlive: true, agentAlive: true }, "running"],
    [
      "supervisor alive with a cancel requested",
      { hasSupervisor: true, supervisorAlive: true, cancelRequested: true },
      "stopping",
    ],
    ["supervisor gone, agent alive", { hasSupervisor: true, agentAlive: true }, "orphaned"],
    ["supervisor gone, agent gone, no exit.json", { hasSupervisor: true }, "lost"],
    ["exit.json written", { hasSupervisor: true, hasExit: true }, "exited"],
    [
      "exit.json written, its check still due",
      { hasSupervisor: true, hasExit: true, checkDue: true },
      "verifying",
    ],
    [
      "exit.json written, its check due, its supervisor gone",
      { hasSupervisor: true, hasExit: true, checkDue: true, supervisorAlive: false },
      "verifying",
    ],
    [
      "record.json written, its check once due",
      { hasRecord: true, hasExit: true, checkDue: true },
      "recorded",
    ],
    [
      "record.json written, whatever else",
      { hasRecord: true, hasExit: false, supervisorAlive: true },
      "recorded",
    ],
    [
      "supervisor gone within the grace: still lost, not starting",
      { hasSupervisor: true, ageMs: 10 },
      "lost",
    ],
    ["admitted queued, long ago, never promoted", { queue: "waiting", ageMs: 60_000 }, "queued"],
    ["queued, with a cancel requested", { queue: "waiting", cancelRequested: true }, "queued"],
    [
      "promoted, its promoter starting the supervisor",
      { queue: "promoted", dispatcherAlive: true, ageMs: 60_000 },
      "starting",
    ],
    ["promoted a moment ago, the promoter gone", { queue: "promoted", ageMs: 100 }, "starting"],
    [
      "promoted, the promoter died before any supervisor came",
      { queue: "promoted", ageMs: 60_000 },
      "queued",
    ],
    [
      "promoted and supervised, the supervisor gone",
      { queue: "promoted", hasSupervisor: true, ageMs: 60_000 },
      "lost",
    ],
    ["promoted and running", { queue: "promoted", hasSupervisor: true, supervisorAlive: true }, "running"],
    [
      "queued and cancelled before it started: exit.json written",
      { queue: "waiting", hasExit: true },
      "exited",
    ],
    // Placed on an engine (specs/placement.md): before supervisor.json, the engine decides, whatever the age.
    ["its job pending in the engine, long ago", { job: "pending", ageMs: 60_000 }, "queued"],
    ["its job running in the engine, no supervisor yet", { job: "running", ageMs: 60_000 }, "starting"],
    ["its job ended in the engine a moment after its submission", { job: "ended", ageMs: 10 }, "lost"],
    [
      "promoted, then submitted: its job pending",
      { queue: "promoted", job: "pending", ageMs: 60_000 },
      "queued",
    ],
    ["its supervisor came up, then the job is said pending", { hasSupervisor: true, job: "pending" }, "lost"],
    [
      "its supervisor elsewhere, neither its lock nor an engine can tell",
      { hasSupervisor: true, undecided: true, agentAlive: false },
      "unknown",
    ],
    ["undecided, with exit.json written", { hasSupervisor: true, hasExit: true, undecided: true }, "exited"],
    ["undecided, and recorded", { hasRecord: true, undecided: true }, "recorded"],
  ];
  for (const [title, observation, state] of cases) {
    it(`is ${state} when ${title}`, () => {
      expect(dispatchState({ ...base, ...observation })).toBe(state);
    });
  }
});

describe("readerDuty", () => {
  const cases: [string, Parameters<typeof readerDuty>, ReturnType<typeof readerDuty>][] = [
    [
      "an orphan whose named agent runs: adopt it",
      ["orphaned", { supervisorAlive: false, agentNamedAlive: true }],
      "adopt",
    ],
    [
      "an orphan known only by its dispatch variable: nothing a reader can do (cancel stops it)",
      ["orphaned", { supervisorAlive: false, agentNamedAlive: false }],
      null,
    ],
    ["a lost dispatch: record it", ["lost", { supervisorAlive: false, agentNamedAlive: false }], "record"],
    [
      "ended, its supervisor gone before the record: record it",
      ["exited", { supervisorAlive: false, agentNamedAlive: false }],
      "record",
    ],
    [
      "ended, its supervisor writing the record: leave it",
      ["exited", { supervisorAlive: true, agentNamedAlive: false }],
      null,
    ],
    ["running", ["running", { supervisorAlive: true, agentNamedAlive: true }], null],
    [
      "a check whose supervisor runs it: leave it",
      ["verifying", { supervisorAlive: true, agentNamedAlive: false }],
      null,
    ],
    [
      "a check whose supervisor died: have it taken over (run, or its run waited for)",
      ["verifying", { supervisorAlive: false, agentNamedAlive: false }],
      "adopt",
    ],
    [
      "a check of a placed dispatch whose supervisor died: record it (never taken over outside its job)",
      ["verifying", { supervisorAlive: false, agentNamedAlive: false, mayAdopt: false }],
      "record",
    ],
    [
      "a check whose supervisor's life is not known here: leave it",
      ["verifying", { supervisorAlive: false, agentNamedAlive: false, undecided: true }],
      null,
    ],
    ["recorded", ["recorded", { supervisorAlive: false, agentNamedAlive: false }], null],
    ["queued", ["queued", { supervisorAlive: false, agentNamedAlive: false }], null],
    [
      "an orphan of a dispatch an engine placed: never adopted outside its job",
      ["orphaned", { supervisorAlive: false, agentNamedAlive: true, mayAdopt: false }],
      null,
    ],
    [
      "ended, its supervisor's life not known here: leave it to a reader who can tell",
      ["exited", { supervisorAlive: false, agentNamedAlive: false, undecided: true }],
      null,
    ],
    ["unknown", ["unknown", { supervisorAlive: false, agentNamedAlive: false, undecided: true }], null],
  ];
  for (const [title, args, duty] of cases) {
    it(`is ${duty ?? "nothing"} for ${title}`, () => {
      expect(readerDuty(...args)).toBe(duty);
    });
  }
});

describe("waitsUnpromoted", () => {
  it("is true only for a dispatch admitted queued, neither promoted nor ended", () => {
    const all = [false, true].flatMap((queued) =>
      [false, true].flatMap((promoted) => [false, true].map((ended) => ({ queued, promoted, ended }))),
    );
    expect(all.filter(waitsUnpromoted)).toEqual([{ queued: true, promoted: false, ended: false }]);
  });
});
