import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import { agent } from "../../src/dispatch/request/agent.js";
import { answer } from "../../src/dispatch/request/answer-input.js";
import { brief } from "../../src/dispatch/request/brief.js";
import { spendCaps } from "../../src/dispatch/request/caps-input.js";
import type { Recorded, Successor } from "../../src/dispatch/request/concern.js";
import { flagValues } from "../../src/dispatch/request/dispatch-options.js";
import {
  nextAttemptRequest,
  type RawDispatchInput,
  validateDispatch,
} from "../../src/dispatch/request/dispatch-request.js";
import { isolation } from "../../src/dispatch/request/isolation-input.js";
import { limits } from "../../src/dispatch/request/limits.js";
import { placement } from "../../src/dispatch/request/placement.js";
import { runCaps } from "../../src/dispatch/request/run-caps.js";
import { sandbox } from "../../src/dispatch/request/sandbox-input.js";
import { steering } from "../../src/dispatch/request/steer-input.js";
import type { AdmitFile, LadderFile, RecordFile, SpecFile } from "../../src/domain/schemas.js";
import type { BackendId } from "../../src/domain/vocab.js";

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

const next = (backend: BackendId) => ({ kind: "next-attempt", backend: backendFor(backend) }) as const;
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
    // Every agent CLI can be talked to; a command run by exec cannot.
    for (const cli of ["codex", "gemini", "opencode"] as const) {
      expect(steering.carry(recorded, next(cli))).toEqual({ steer: STEER });
    }
    expect(steering.carry(recorded, next("exec"))).toEqual({});
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
      maxParallelHost: {},
      runBudget: null,
      queue: true,
    });
    expect(runCaps.carry(recorded, followUp("codex"))).toEqual({});
  });

  const ADMIT = { dispatchId: "d1", name: "fix", run: "r", owns: ["src/"] } as unknown as AdmitFile;
  const CHAIN: Recorded = {
    admit: ADMIT,
    spec: {
      cmd: "x",
      env: { HOME_OF_CLI: "/h", OTHER: "o" },
      maxTokens: 1000,
      maxCostUsd: 2,
    } as unknown as SpecFile,
    ladder: {
      ...LADDER,
      request: {
        ...LADDER.request,
        effort: "high",
        access: "workspace-write",
        thread: "t-1",
        envNames: ["HOME_OF_CLI"],
        extraArgs: ["--x"],
      },
    },
  };

  it("repeats the core on a chain's next attempt, what means something to the first CLI only on it", () => {
    const core = { name: "fix", run: "r", cwd: "/work", owns: ["src/"], access: "workspace-write" };
    expect(agent.carry(CHAIN, next("codex"))).toEqual({
      ...core,
      effort: "high",
      env: { HOME_OF_CLI: "/h" },
      thread: "t-1",
      extraArgs: ["--x"],
    });
    expect(agent.carry(CHAIN, next("gemini"))).toEqual({
      ...core,
      effort: null,
      env: { HOME_OF_CLI: "/h" },
      thread: null,
      extraArgs: [],
    });
    expect(agent.carry(CHAIN, followUp("codex"))).toEqual({});
  });

  it("gives a chain's next attempt what its caps leave, and refuses one with nothing left", () => {
    const record = (tokens: number, costUsd: number | null) =>
      ({ tokens: { input: tokens, cached: 0, output: 0 }, costUsd, costSource: "priced" }) as RecordFile;
    expect(spendCaps.carry({ ...CHAIN, record: record(400, 0.5) }, next("gemini"))).toEqual({
      caps: { maxTokens: 600, maxCostUsd: 1.5 },
    });
    expect(() => spendCaps.carry({ ...CHAIN, record: record(1000, 0.5) }, next("gemini"))).toThrow(
      /--max-tokens is spent/,
    );
    expect(spendCaps.carry({ ...CHAIN, record: record(1000, 0.5) }, followUp("codex"))).toEqual({});
  });

  it("asks a chain's next attempt for the same answer, with the repairs its ladder has left", () => {
    const schema = { schema: { type: "object" }, text: "{}" };
    const ladder = { ...LADDER, repairs: 1 };
    expect(answer.carry({ ...CHAIN, ladder, answer: schema }, next("gemini"))).toEqual({
      answer: { ...schema, repair: 1 },
    });
    expect(answer.carry({ ...CHAIN, answer: null }, next("gemini"))).toEqual({ answer: null });
    expect(answer.carry({ ...CHAIN, answer: schema }, followUp("codex"))).toEqual({});
  });

  const composed = Buffer.from("Find it.\n\nThe hint.\n");
  const briefCases: { title: string; recorded: Recorded; to: Successor; carried: object | RegExp }[] = [
    {
      title: "the brief as given, by spec.json's briefBytes, and --lock-hint and --outcome as asked",
      recorded: {
        spec: { cmd: "x", briefBytes: 8, outcome: true } as SpecFile,
        ladder: { ...LADDER, request: { ...LADDER.request, lockHint: true } },
        brief: composed,
      },
      to: next("gemini"),
      carried: { brief: Buffer.from("Find it."), lockHint: true, outcome: true },
    },
    {
      title: "all of brief.md, and no hint, from a folder written before briefBytes and lockHint",
      recorded: { spec: { cmd: "x" } as SpecFile, ladder: LADDER, brief: composed },
      to: next("gemini"),
      carried: { brief: composed },
    },
    {
      title: "nothing of the first brief for a repair, whose brief is the hand-over's own",
      recorded: {
        spec: { cmd: "x", briefBytes: 8 } as SpecFile,
        ladder: { ...LADDER, request: { ...LADDER.request, lockHint: true } },
        brief: composed,
      },
      to: { ...next("codex"), repair: true },
      carried: {},
    },
    {
      title: "no brief for a dispatch that had none (exec)",
      recorded: { spec: { cmd: "x" } as SpecFile, ladder: LADDER, brief: null },
      to: next("gemini"),
      carried: { brief: null },
    },
    {
      title: "E_FILE_CORRUPT for a brief.md shorter than briefBytes",
      recorded: { spec: { cmd: "x", briefBytes: 99 } as SpecFile, ladder: LADDER, brief: composed },
      to: next("gemini"),
      carried: /brief\.md is 20 bytes, fewer than the 99/,
    },
    {
      title: "nothing for a follow-up, which gives its own brief",
      recorded: { spec: { cmd: "x", briefBytes: 8 } as SpecFile, ladder: LADDER, brief: composed },
      to: followUp("codex"),
      carried: {},
    },
  ];

  it.each(briefCases)("carries of the brief $title", ({ recorded, to, carried }) => {
    if (carried instanceof RegExp) expect(() => brief.carry(recorded, to)).toThrow(carried);
    else expect(brief.carry(recorded, to)).toEqual(carried);
  });

  it("gives a chain's next attempt every field of a request but its step's and the notification's", () => {
    const spent = {
      tokens: { input: 1, cached: 0, output: 0 },
      costUsd: null,
      costSource: null,
    } as RecordFile;
    const fresh = validateDispatch({
      ...flagValues({}),
      backend: "codex",
      bin: "/bin/true",
      run: "default",
      brief: Buffer.from("b"),
      rest: [],
      environment: process.env,
    } as RawDispatchInput);
    const carried = nextAttemptRequest(
      { ...CHAIN, ladder: LADDER, brief: Buffer.from("b"), answer: null, record: spent },
      next("gemini"),
    );
    // A chain is notified once, by its first attempt's command (specs/cli.md, "Notifications").
    const notCarried = ["backend", "model", "bin", "chain", "notify", "runNotify"];
    const missing = Object.keys(fresh).filter((k) => !notCarried.includes(k) && !(k in carried));
    expect(missing).toEqual([]);
  });
});
