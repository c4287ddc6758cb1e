import { describe, expect, it } from "vitest";
import { type HostIdentity, hostRelation, mayTouchProcesses } from "../../src/domain/state/host.js";
import { judgeSupervisor, type SupervisorSight } from "../../src/domain/state/supervisor-judgement.js";

const here: HostIdentity = { name: "vm", bootId: "b-1", pidNamespace: "4026531836" };

describe("how a recorded host stands to the reader's", () => {
  it.each<[string, HostIdentity | undefined, string]>([
    ["no host recorded (an older folder)", undefined, "same"],
    ["the same boot and PID namespace", { ...here }, "same"],
    [
      "the same boot and namespace under another UTS name (unshare --uts)",
      { ...here, name: "other" },
      "same",
    ],
    [
      "the same boot, another PID namespace (a container on this kernel)",
      { ...here, pidNamespace: "4026532999" },
      "other",
    ],
    ["the same name, another boot (this host, rebooted)", { ...here, bootId: "b-0" }, "rebooted"],
    [
      "another name and boot (another host)",
      { name: "node7", bootId: "b-7", pidNamespace: "4026531836" },
      "other",
    ],
    ["no boot id, the same name and namespace (not Linux)", { ...here, bootId: null }, "same"],
    ["no boot id, another name", { name: "mac", bootId: null, pidNamespace: null }, "other"],
  ])("%s: %s", (_, recorded, relation) => {
    expect(hostRelation(recorded, here)).toBe(relation);
  });

  it("lets the reader touch processes of its own host only", () => {
    expect([mayTouchProcesses("same"), mayTouchProcesses("rebooted"), mayTouchProcesses("other")]).toEqual([
      true,
      false,
      false,
    ]);
  });
});

const STALE = 30_000;
const sight = (over: Partial<SupervisorSight>): SupervisorSight => ({
  relation: "other",
  processAlive: false,
  lock: { kind: "held", ageMs: 0 },
  lockStaleMs: STALE,
  engine: { kind: "none" },
  ...over,
});
const fresh = { kind: "held", ageMs: STALE - 1 } as const;
const stale = { kind: "held", ageMs: STALE } as const;
const missing = { kind: "missing" } as const;
const running = { kind: "job", phase: "running", words: "slurm job 7 RUNNING" } as const;
const ended = { kind: "job", phase: "ended", words: "slurm job 7 NODE_FAIL (NodeDown)" } as const;

describe("judging a supervisor", () => {
  it.each<[string, Partial<SupervisorSight>, ReturnType<typeof judgeSupervisor>]>([
    [
      "on this host, alive by its process",
      { relation: "same", processAlive: true, lock: stale },
      { verdict: "alive", by: "process" },
    ],
    [
      "on this host, dead by its process whatever its lock says",
      { relation: "same", processAlive: false, lock: fresh },
      { verdict: "dead", by: "process", words: null },
    ],
    ["elsewhere, alive while its lock is fresh", { lock: fresh }, { verdict: "alive", by: "lock" }],
    [
      "elsewhere, alive while its lock is fresh even if the engine says its job ended",
      { lock: fresh, engine: ended },
      { verdict: "alive", by: "lock" },
    ],
    [
      "elsewhere, alive with a refresh dated ahead of the reader's clock",
      { lock: { kind: "held", ageMs: -5000 } },
      { verdict: "alive", by: "lock" },
    ],
    [
      "elsewhere, stale lock, job still running: alive by the engine",
      { lock: stale, engine: running },
      { verdict: "alive", by: "engine" },
    ],
    [
      "elsewhere, stale lock, job ended: dead, in the engine's words",
      { lock: stale, engine: ended },
      { verdict: "dead", by: "engine", words: "slurm job 7 NODE_FAIL (NodeDown)" },
    ],
    [
      "elsewhere, no lock, job pending again (requeued by hand): dead",
      { lock: missing, engine: { kind: "job", phase: "pending", words: "slurm job 7 PENDING (BeginTime)" } },
      { verdict: "dead", by: "engine", words: "slurm job 7 PENDING (BeginTime)" },
    ],
    [
      "elsewhere, stale lock, job forgotten by the engine: dead",
      { lock: stale, engine: { kind: "job", phase: "ended", words: "slurm no longer knows job 7" } },
      { verdict: "dead", by: "engine", words: "slurm no longer knows job 7" },
    ],
    [
      "elsewhere, stale lock, engine silent: unknown",
      { lock: stale, engine: { kind: "unreachable", words: "scontrol did not answer within 20000 ms" } },
      {
        verdict: "unknown",
        why: "its lock is stale and the engine did not answer: scontrol did not answer within 20000 ms",
      },
    ],
    [
      "this host rebooted since, lock stale, no engine: dead",
      { relation: "rebooted", lock: stale },
      { verdict: "dead", by: "reboot", words: null },
    ],
    [
      "this host rebooted since, lock fresh (a host of the same name): alive",
      { relation: "rebooted", lock: fresh },
      { verdict: "alive", by: "lock" },
    ],
  ])("%s", (_, over, verdict) => {
    expect(judgeSupervisor(sight(over))).toEqual(verdict);
  });

  it("never judges a supervisor of another PID namespace dead without an engine: local placement, stale lock", () => {
    expect(judgeSupervisor(sight({ lock: stale }))).toMatchObject({ verdict: "unknown" });
    expect(judgeSupervisor(sight({ lock: missing }))).toMatchObject({ verdict: "unknown" });
  });

  it("counts a lock stale from its stale time on, to the millisecond", () => {
    expect(judgeSupervisor(sight({ lock: { kind: "held", ageMs: STALE - 1 }, engine: ended })).verdict).toBe(
      "alive",
    );
    expect(judgeSupervisor(sight({ lock: { kind: "held", ageMs: STALE }, engine: ended })).verdict).toBe(
      "dead",
    );
  });
});
