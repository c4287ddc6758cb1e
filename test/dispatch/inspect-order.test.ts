import { describe, expect, it } from "vitest";
import { type FolderProbe, inspectDispatch } from "../../src/dispatch/read/inspect.js";
import type { HostIdentity } from "../../src/domain/state/host.js";
import type { LockSight } from "../../src/domain/state/supervisor-judgement.js";
import type { FolderJson, FolderJsonFile } from "../../src/folder/read.js";
import type { FileRead } from "../../src/infra/json-file.js";
import { FakeClock } from "../helpers/fake-clock.js";

// A reader looks at a folder while the dispatch moves on. These tests script a normal hand-over (the
// world changes from one moment to the next) and let it happen after each single observation the reader
// makes: however the two interleave, a live dispatch must never be judged lost.

const NOW = Date.parse("2026-11-29T12:00:00.000Z");
/** Admitted long ago, so the start grace no longer covers a missing supervisor.json. */
const ADMITTED = new Date(NOW - 60_000).toISOString();
const clock = new FakeClock({ wall: NOW });

interface World {
  files: Record<string, unknown>;
  /** pid → alive */
  alive: Record<number, boolean>;
  /** Dispatch ids some live process carries as CATHERD_DISPATCH (an agent whose proc.json never came). */
  carried?: string[];
  /** supervisor.lock as the reader sees it. */
  lock?: LockSight;
}

/** The reader's host: a process recorded without a host (these) counts as its own. */
const READER: HostIdentity = { name: "reader", bootId: "boot-1", pidNamespace: "4026531836" };

const DISPATCHER = 101;
const SUPERVISOR = 202;
const AGENT = 303;

const admit = {
  dispatchId: "d-order",
  backend: "exec",
  admittedAt: ADMITTED,
  dispatcher: { pid: DISPATCHER, startTime: "1" },
};
const supervisor = { pid: SUPERVISOR, startTime: "2", startedAt: ADMITTED };
const proc = { pid: AGENT, pgid: AGENT, startTime: "3" };
const spec = { dispatchId: "d-order", backend: "exec", cmd: "agent" };
const ELSEWHERE: HostIdentity = { name: "box", bootId: "boot-1", pidNamespace: "4026532999" };
const supervisorElsewhere = { ...supervisor, host: ELSEWHERE };
const procElsewhere = { ...proc, host: ELSEWHERE };
const exit = { reason: "completed" };
const record = { status: "ok" };

/** A probe that shows `before` for its first `switchAfter` observations and `after` from then on. */
function scriptedProbe(before: World, after: World, switchAfter: number): FolderProbe {
  let observations = 0;
  const world = () => (observations++ < switchAfter ? before : after);
  return {
    read: <F extends FolderJsonFile>(name: F): FileRead<FolderJson<F>> => {
      const value = world().files[name];
      return value === undefined ? { kind: "missing" } : { kind: "ok", value: value as FolderJson<F> };
    },
    exists: (name) => world().files[name] !== undefined,
    isAlive: (pid) => world().alive[pid] === true,
    host: () => READER,
    lock: () => world().lock ?? { kind: "missing" },
    carriesDispatch: (dispatchId) => world().carried?.includes(dispatchId) === true,
    birthMs: () => NOW - 60_000,
  };
}

/** Every state a reader can report when the hand-over happens after each of its observations. */
function statesAcross(before: World, after: World): Set<string> {
  const states = new Set<string>();
  for (let k = 0; k <= 20; k++) {
    states.add(
      inspectDispatch("/nonexistent/d-order", { clock, probe: scriptedProbe(before, after, k) }).state,
    );
  }
  return states;
}

const handOvers: Array<{ name: string; before: World; after: World; allowed: string[] }> = [
  {
    name: "the dispatcher sees supervisor.json and exits",
    before: { files: { "admit.json": admit }, alive: { [DISPATCHER]: true } },
    after: {
      files: { "admit.json": admit, "supervisor.json": supervisor },
      alive: { [SUPERVISOR]: true },
    },
    allowed: ["starting", "running"],
  },
  {
    name: "the supervisor names its agent in proc.json",
    before: { files: { "admit.json": admit, "supervisor.json": supervisor }, alive: { [SUPERVISOR]: true } },
    after: {
      files: { "admit.json": admit, "supervisor.json": supervisor, "proc.json": proc },
      alive: { [SUPERVISOR]: true, [AGENT]: true },
    },
    allowed: ["running"],
  },
  {
    name: "the supervisor writes exit.json and record.json, then exits",
    before: {
      files: { "admit.json": admit, "supervisor.json": supervisor, "proc.json": proc },
      alive: { [SUPERVISOR]: true, [AGENT]: true },
    },
    after: {
      files: {
        "admit.json": admit,
        "supervisor.json": supervisor,
        "proc.json": proc,
        "exit.json": exit,
        "record.json": record,
      },
      alive: {},
    },
    allowed: ["running", "exited", "recorded"],
  },
  {
    name: "the supervisor writes record.json after exit.json, then exits",
    before: {
      files: { "admit.json": admit, "supervisor.json": supervisor, "proc.json": proc, "exit.json": exit },
      alive: { [SUPERVISOR]: true },
    },
    after: {
      files: {
        "admit.json": admit,
        "supervisor.json": supervisor,
        "proc.json": proc,
        "exit.json": exit,
        "record.json": record,
      },
      alive: {},
    },
    allowed: ["exited", "recorded"],
  },
  {
    // Elsewhere the lock stands for the process: it is released only after the record.
    name: "a supervisor in another PID namespace writes exit.json and record.json, then releases its lock",
    before: {
      files: { "admit.json": admit, "supervisor.json": supervisorElsewhere, "proc.json": procElsewhere },
      alive: {},
      lock: { kind: "held", ageMs: 1000 },
    },
    after: {
      files: {
        "admit.json": admit,
        "supervisor.json": supervisorElsewhere,
        "proc.json": procElsewhere,
        "exit.json": exit,
        "record.json": record,
      },
      alive: {},
    },
    allowed: ["running", "exited", "recorded"],
  },
];

describe("inspectDispatch observes processes before the files they write", () => {
  for (const { name, before, after, allowed } of handOvers) {
    it(`never reports a live dispatch lost when ${name}`, () => {
      const states = statesAcross(before, after);
      expect([...states].filter((s) => !allowed.includes(s))).toEqual([]);
    });
  }

  it("still reports a dispatch lost when its supervisor died without exit.json", () => {
    const dead: World = {
      files: { "admit.json": admit, "supervisor.json": supervisor, "proc.json": proc },
      alive: {},
    };
    expect(statesAcross(dead, dead)).toEqual(new Set(["lost"]));
  });

  it("still reports a dispatch lost when its dispatcher died before any supervisor came up", () => {
    const dead: World = { files: { "admit.json": admit }, alive: {} };
    expect(statesAcross(dead, dead)).toEqual(new Set(["lost"]));
  });

  it("reports an orphan, not a lost dispatch, when its supervisor died before proc.json and the agent runs on", () => {
    const orphan: World = {
      files: { "admit.json": admit, "spec.json": spec, "supervisor.json": supervisor },
      alive: {},
      carried: ["d-order"],
    };
    expect(statesAcross(orphan, orphan)).toEqual(new Set(["orphaned"]));
  });

  it("looks for processes by the id in spec.json, else by the folder's name", () => {
    const bySpec: World = {
      files: {
        "admit.json": admit,
        "spec.json": { ...spec, dispatchId: "from-spec" },
        "supervisor.json": supervisor,
      },
      alive: {},
      carried: ["from-spec"],
    };
    expect(statesAcross(bySpec, bySpec)).toEqual(new Set(["orphaned"]));
    const byName: World = { files: { "supervisor.json": supervisor }, alive: {}, carried: ["d-order"] };
    expect(statesAcross(byName, byName)).toEqual(new Set(["orphaned"]));
  });
});
