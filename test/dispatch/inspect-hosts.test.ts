import { describe, expect, it } from "vitest";
import { endingOfSight } from "../../src/dispatch/read/engine-sight.js";
import { type FolderProbe, inspectDispatch } from "../../src/dispatch/read/inspect.js";
import { queueInfo } from "../../src/dispatch/read/rows.js";
import { judgeEnding } from "../../src/domain/ending/ending.js";
import { CatherdError } from "../../src/domain/errors.js";
import type { HostIdentity } from "../../src/domain/state/host.js";
import type { LockSight } from "../../src/domain/state/supervisor-judgement.js";
import type { EngineSight } from "../../src/engines/engine.js";
import type { SlurmJob } from "../../src/engines/slurm/output.js";
import { forgottenSight, jobSight } from "../../src/engines/slurm/slurm-engine.js";
import type { FolderJson, FolderJsonFile } from "../../src/folder/read.js";
import type { FileRead } from "../../src/infra/json-file.js";
import { FakeClock } from "../helpers/fake-clock.js";

// How a reader judges a dispatch whose processes it cannot see (specs/placement.md, "Identity across
// hosts", "Judging a supervisor"): a supervisor on another host or PID namespace by its lock and its
// engine, never by the reader's /proc; a placed dispatch before its supervisor came up by its job. The
// probe records what the reader asked of its /proc: nothing, for a process of another host.

const NOW = Date.parse("2026-12-01T12:00:00.000Z");
const clock = new FakeClock({ wall: NOW });
const READER: HostIdentity = { name: "login1", bootId: "boot-a", pidNamespace: "4026531836" };
const NODE: HostIdentity = { name: "node7", bootId: "boot-n", pidNamespace: "4026531836" };
const CONTAINER: HostIdentity = { ...READER, name: "box", pidNamespace: "4026532999" };
const REBOOTED: HostIdentity = { ...READER, bootId: "boot-before" };
const DISPATCHER = 101;
const SUPERVISOR = 202;
const AGENT = 303;

const ago = (ms: number) => new Date(NOW - ms).toISOString();
const admit = (admittedAgoMs = 600_000, placed = false) => ({
  dispatchId: "d-1",
  run: "r1",
  name: "fix",
  backend: "codex",
  model: null,
  cwd: "/w",
  owns: [],
  admittedAt: ago(admittedAgoMs),
  dispatcher: { pid: 101, startTime: "1", host: READER },
  git: null,
  ...(placed ? { placement: { engine: "slurm", options: [] } } : {}),
});
const placement = { engine: "slurm", jobId: "12", cluster: null, submittedAt: ago(590_000), node: null };
const supervisorOn = (host: HostIdentity) => ({
  pid: SUPERVISOR,
  startTime: "2",
  host,
  startedAt: ago(500_000),
  adoptions: 0,
});
const procOn = (host: HostIdentity) => ({
  pid: AGENT,
  pgid: AGENT,
  startTime: "3",
  host,
  startedAt: ago(499_000),
});

const fresh: LockSight = { kind: "held", ageMs: 5_000 };
const stale: LockSight = { kind: "held", ageMs: 45_000 };

function job(state: string, reason: string | null = null): EngineSight {
  const slurmJob: SlurmJob = {
    jobId: "12",
    name: "catherd.r1.d-1",
    state,
    reason,
    node: state === "PENDING" ? null : "node7",
    exit: state === "CANCELLED" ? { code: 0, signal: 15 } : null,
    submitTime: null,
    startTime: null,
    endTime: null,
    licenses: null,
    stdout: null,
    cancelledBy: null,
  };
  return jobSight(slurmJob);
}

interface Folder {
  /** The folder's JSON files by their name without `.json`: admit, supervisor, proc, placement, exit. */
  files: Record<string, unknown>;
  lock?: LockSight;
  /** pids alive in the reader's /proc */
  alive?: number[];
}

function probeOf(folder: Folder): FolderProbe & { asked: number[] } {
  const asked: number[] = [];
  return {
    asked,
    read: <F extends FolderJsonFile>(name: F): FileRead<FolderJson<F>> => {
      const value = folder.files[name.replace(/\.json$/, "")];
      return value === undefined ? { kind: "missing" } : { kind: "ok", value: value as FolderJson<F> };
    },
    exists: () => false,
    isAlive: (pid) => {
      // The dispatcher ran on the reader's host: looking it up is right.
      if (pid !== DISPATCHER) asked.push(pid);
      return folder.alive?.includes(pid) === true;
    },
    host: () => READER,
    lock: () => folder.lock ?? { kind: "missing" },
    carriesDispatch: () => {
      asked.push(-1);
      return false;
    },
    birthMs: () => NOW - 600_000,
  };
}

const look = (folder: Folder, sight: EngineSight | null = null) => {
  const probe = probeOf(folder);
  const view = inspectDispatch("/runs/r1/dispatches/fix/d-1", { clock, probe, job: sight });
  return { view, asked: probe.asked };
};

describe("a local dispatch whose supervisor runs in another PID namespace", () => {
  const running = { admit: admit(), supervisor: supervisorOn(CONTAINER), proc: procOn(CONTAINER) };

  it("is running while its lock is fresh, and none of its pids is looked up here", () => {
    const { view, asked } = look({ files: running, lock: fresh });
    expect(view).toMatchObject({ state: "running", duty: null, undecided: null });
    expect(asked).toEqual([]);
  });

  it.each([
    ["stale", stale],
    ["missing", { kind: "missing" } as LockSight],
  ])("is unknown, and nobody records it, when its lock is %s", (_title, lock) => {
    const { view, asked } = look({ files: running, lock });
    expect(view).toMatchObject({ state: "unknown", duty: null });
    expect(view.undecided).toMatch(/^supervisor 202 runs on box: .*only a reader on its host can tell$/);
    expect(asked).toEqual([]);
  });

  it("counts a lock refreshed in the future (a clock ahead of the reader's) as fresh", () => {
    expect(look({ files: running, lock: { kind: "held", ageMs: -20_000 } }).view.state).toBe("running");
  });

  it("leaves an ended dispatch with a stale lock unrecorded: exited, no duty", () => {
    const { view } = look({ files: { ...running, exit: { reason: "exited" } }, lock: stale });
    expect(view).toMatchObject({ state: "exited", duty: null, undecided: expect.any(String) });
  });

  it("records one whose supervisor ran in a boot that is over", () => {
    const { view, asked } = look({ files: { ...running, supervisor: supervisorOn(REBOOTED) }, lock: stale });
    expect(view).toMatchObject({ state: "lost", duty: "record" });
    expect(asked).toEqual([]);
  });

  it("waits for a supervisor its dispatcher there is still starting, then gives it up", () => {
    const there = { ...admit(30_000), dispatcher: { pid: 101, startTime: "1", host: CONTAINER } };
    expect(look({ files: { admit: there } }).view.state).toBe("starting");
    const old = { ...there, admittedAt: ago(100_000) };
    expect(look({ files: { admit: old } }).view).toMatchObject({ state: "lost", duty: "record" });
  });
});

describe("a dispatch an engine placed, its supervisor on a compute node", () => {
  const onNode = {
    admit: admit(600_000, true),
    placement,
    supervisor: supervisorOn(NODE),
    proc: procOn(NODE),
  };

  it("is running by its lock, without asking the engine", () => {
    expect(look({ files: onNode, lock: fresh }).view.state).toBe("running");
  });

  it("is running by its engine when its lock is stale", () => {
    expect(look({ files: onNode, lock: stale }, job("RUNNING")).view.state).toBe("running");
    expect(look({ files: onNode, lock: stale }, job("COMPLETING")).view.state).toBe("running");
  });

  it("is lost once its lock is stale and the engine ended its job, and is recorded as the engine ended it", () => {
    const sight = job("CANCELLED");
    const { view, asked } = look({ files: onNode, lock: stale }, sight);
    expect(view).toMatchObject({ state: "lost", duty: "record" });
    expect(asked).toEqual([]);
    expect(endingOfSight(view.job, true)).toMatchObject({ reason: "cancelled", state: "CANCELLED" });
  });

  it("is unknown, with the engine's error, when the engine does not answer", () => {
    const error = new CatherdError("E_ENGINE_TIMEOUT", "cannot read Slurm job 12: squeue did not answer");
    const { view } = look({ files: onNode, lock: stale }, { kind: "unreachable", error });
    expect(view).toMatchObject({ state: "unknown", duty: null });
    expect(view.problems.map((p) => p.code)).toEqual(["E_ENGINE_TIMEOUT"]);
  });

  it("is unknown when the engine was not asked (under the run's lock, without a sight)", () => {
    expect(look({ files: onNode, lock: stale }).view.state).toBe("unknown");
  });

  it("is lost when the engine forgot its job, in the words of slurmstepd's notice", () => {
    const notice = {
      jobId: "12",
      node: "node7",
      at: "2026-12-01T11:00:00",
      due: "TIME LIMIT",
      words: "JOB 12 ON node7 CANCELLED AT 2026-12-01T11:00:00 DUE TO TIME LIMIT",
    };
    const sight = forgottenSight("12", notice);
    const { view } = look({ files: onNode, lock: stale }, sight);
    expect(view.state).toBe("lost");
    const ending = endingOfSight(sight, true);
    expect(ending).toMatchObject({ reason: "wall-timeout", state: "TIMEOUT" });
    if (ending === null) return;
    // The record's status for it, as src/domain/ending/ending.ts decides it from the engine's ending.
    const words = { name: "slurm", jobId: "12", state: ending.state, words: ending.words } as const;
    const seen = { engine: { ...ending, words } };
    expect(judgeEnding({ reason: "lost", code: null, signal: null, seen }, null).status).toBe("timeout");
  });
});

describe("a dispatch an engine placed, its supervisor not up yet", () => {
  const submitted = { admit: admit(600_000, true), placement };

  it("is queued while its job is pending, with the engine's reason where a queue place is shown", () => {
    const { view } = look({ files: submitted }, job("PENDING", "Licenses"));
    expect(view).toMatchObject({ state: "queued", duty: null });
    expect(queueInfo(view, new Map())).toEqual({
      position: null,
      since: placement.submittedAt,
      blockedBy: "engine",
      blocker: null,
      notBefore: null,
      engine: { name: "slurm", jobId: "12", reason: "Licenses" },
    });
    expect(queueInfo(look({ files: submitted }, job("PENDING")).view, new Map())?.engine?.reason).toBe(
      "waiting for the scheduler",
    );
  });

  it("is starting while its job runs without supervisor.json, however long ago it was admitted", () => {
    expect(look({ files: submitted }, job("RUNNING")).view).toMatchObject({ state: "starting", duty: null });
  });

  it("is lost, never looked for in /proc, when its job ended before its supervisor came up", () => {
    const { view, asked } = look({ files: submitted }, job("CANCELLED", "Licenses"));
    expect(view).toMatchObject({ state: "lost", duty: "record" });
    expect(asked).toEqual([]);
    expect(endingOfSight(view.job, false)).toMatchObject({
      reason: "cancelled",
      words: "slurm job 12 CANCELLED (Licenses), batch script signal 15",
    });
    expect(endingOfSight(job("NODE_FAIL", "NodeDown"), false)?.words).toMatch(
      /its supervisor never started$/,
    );
  });

  it("is unknown when the engine was not asked", () => {
    expect(look({ files: submitted }).view.state).toBe("unknown");
  });
});

describe("a dispatch an engine placed on the reader's own host", () => {
  const here = {
    admit: admit(600_000, true),
    placement,
    supervisor: supervisorOn(READER),
    proc: procOn(READER),
  };

  it("is judged by its pid, as a local one", () => {
    expect(look({ files: here, alive: [SUPERVISOR, AGENT] }).view.state).toBe("running");
  });

  it("is recorded only once the engine says how the job ended", () => {
    expect(look({ files: here }, job("COMPLETING")).view).toMatchObject({
      state: "unknown",
      duty: null,
      undecided: "supervisor 202 is gone; slurm is still ending job 12",
    });
    expect(look({ files: here }, job("TIMEOUT", "TimeLimit")).view).toMatchObject({
      state: "lost",
      duty: "record",
    });
  });

  it("is never adopted outside its job: an orphan there is left to cancel", () => {
    expect(look({ files: here, alive: [AGENT] }, job("CANCELLED")).view).toMatchObject({
      state: "orphaned",
      duty: null,
    });
  });
});
