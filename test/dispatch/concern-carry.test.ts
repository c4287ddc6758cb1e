import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import type { Recorded } from "../../src/dispatch/request/concern.js";
import { isolation } from "../../src/dispatch/request/isolation-input.js";
import { limits } from "../../src/dispatch/request/limits.js";
import { placement } from "../../src/dispatch/request/placement.js";
import { runCaps } from "../../src/dispatch/request/run-caps.js";
import { sandbox } from "../../src/dispatch/request/sandbox-input.js";
import { steering } from "../../src/dispatch/request/steer-input.js";
import type { AdmitFile, LadderFile, SpecFile } from "../../src/domain/schemas.js";

// What a successor takes over of each concern (specs/dispatch.md, "A request's concerns"): a chain's
// next attempt repeats the ladder's request, a follow-up turn its turn's steering and sandbox.

const LADDER = {
  rungs: [],
  retryWithinMs: null,
  retries: 0,
  rung: { backend: "codex", model: null, bin: "/bin/true" },
  request: {
    cwd: "/work",
    effort: null,
    access: null,
    thread: null,
    envNames: [],
    idleMs: 60_000,
    wallMs: null,
    killGraceMs: 0,
    memoryBytes: 4 << 20,
    maxProcs: 64,
    worktree: { base: "main" },
    passEnv: ["TOKEN"],
    keepTmp: true,
    extraArgs: [],
  },
} as LadderFile;

const STEER = { keepOpenMs: 60_000, onQuestion: null };
const SANDBOX = {
  mode: "files+net",
  allowWrite: [],
  denyRead: [],
  allowNet: [{ host: "example.com", port: 443 }],
};
const SPEC = { steer: STEER, sandbox: SANDBOX } as unknown as SpecFile;

const next = (backend: "codex" | "claude-code" | "gemini") =>
  ({ kind: "next-attempt", backend: backendFor(backend) }) as const;
const followUp = (backend: "codex" | "claude-code") =>
  ({ kind: "follow-up", backend: backendFor(backend) }) as const;

describe("what a successor carries", () => {
  const recorded: Recorded = { spec: SPEC, ladder: LADDER };

  it("repeats a chain's limits and isolation in its next attempt, and not in a follow-up", () => {
    expect(limits.carry(recorded, next("gemini"))).toEqual({
      idleMs: 60_000,
      wallMs: null,
      killGraceMs: 0,
      memoryBytes: 4 << 20,
      maxProcs: 64,
    });
    expect(isolation.carry(recorded, next("gemini"))).toEqual({
      isolation: { worktree: { base: "main" }, passEnv: ["TOKEN"], keepTmp: true },
    });
    expect(limits.carry(recorded, followUp("codex"))).toEqual({});
    expect(isolation.carry(recorded, followUp("codex"))).toEqual({});
    expect(limits.carry({ spec: SPEC, ladder: null }, next("gemini"))).toEqual({});
  });

  it("keeps steering on where the successor's CLI can be talked to", () => {
    expect(steering.carry(recorded, next("claude-code"))).toEqual({ steer: STEER });
    expect(steering.carry(recorded, followUp("claude-code"))).toEqual({ steer: STEER });
    expect(steering.carry(recorded, next("gemini"))).toEqual({});
    expect(steering.carry({ spec: null, ladder: LADDER }, next("claude-code"))).toEqual({});
  });

  it("sandboxes a next attempt as the first, with its own CLI's endpoints; a follow-up as its turn", () => {
    const carried = sandbox.carry(recorded, next("gemini"));
    expect(carried.sandbox).toMatchObject({ mode: null, allowNet: [] });
    expect(carried.sandboxPolicy?.allowNet).toContainEqual({ host: "example.com", port: 443 });
    expect(carried.sandboxPolicy?.allowNet.length).toBeGreaterThan(1);
    expect(sandbox.carry(recorded, followUp("codex"))).toEqual({ sandboxPolicy: SANDBOX });
    expect(sandbox.carry({ spec: null, ladder: LADDER }, next("gemini"))).toMatchObject({
      sandboxPolicy: null,
    });
    expect(sandbox.carry({ spec: null, ladder: null }, followUp("codex"))).toEqual({});
  });

  it("queues a chain's next attempt where its first was placed, saying nothing of the run's caps", () => {
    const admit = { placement: { engine: "slurm", options: ["--qos=long"] } } as AdmitFile;
    expect(placement.carry({ ...recorded, admit }, next("gemini"))).toEqual({
      placement: {
        placement: "slurm",
        runPlacement: null,
        fromEnvironment: null,
        engineOptions: { slurm: ["--qos=long"] },
      },
    });
    expect(
      placement.carry({ ...recorded, admit: {} as AdmitFile }, next("gemini")).placement?.placement,
    ).toBe("local");
    expect(placement.carry({ ...recorded, admit }, followUp("codex"))).toEqual({});
    expect(runCaps.carry(recorded, next("gemini"))).toEqual({
      maxParallel: null,
      maxParallelBackend: {},
      runBudget: null,
      queue: true,
    });
    expect(runCaps.carry(recorded, followUp("codex"))).toEqual({});
  });
});
