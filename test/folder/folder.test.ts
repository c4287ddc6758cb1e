import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { backendFor } from "../../src/backends/backend-registry.js";
import { SPEC_DEFAULTS } from "../../src/domain/defaults.js";
import { ERROR_KINDS, type ErrorCode, type ErrorKind, type ExitReason } from "../../src/domain/vocab.js";
import { backendIdOf, backendOf } from "../../src/folder/backend.js";
import { agentDispatchId, dispatchIdOf } from "../../src/folder/dispatch-id-of.js";
import { writeEndedExit, writeExit } from "../../src/folder/exit.js";
import { humanLine } from "../../src/folder/human-line.js";
import { FILES, fileIn, isDispatchFolder, placeOf } from "../../src/folder/layout.js";
import {
  isSeen,
  markSeen,
  readLiveMarkers,
  removeLiveMarkerOf,
  writeLiveMarker,
} from "../../src/folder/markers.js";
import { readFolderJson } from "../../src/folder/read.js";
import { writeRecord } from "../../src/folder/record.js";
import { absolutePaths, readSpecFile, resolveSpec } from "../../src/folder/spec.js";
import { requestCancel, writeFolderJson } from "../../src/folder/write.js";
import { systemClock } from "../../src/infra/clock.js";
import { runPaths } from "../../src/infra/paths.js";
import { tempDir } from "../helpers/folders.js";

function scratch(): string {
  const dir = tempDir("catherd-folder-");
  return dir;
}
describe("resolveSpec, the one place a spec's defaults are applied", () => {
  it("gives a hand-written spec of just `cmd` every default, from its backend and catherd's own", () => {
    const spec = resolveSpec(
      { backend: "exec", cmd: "make", args: [], env: {} },
      backendFor("exec"),
      "/x/d-1",
    );
    expect(spec).toEqual({
      schema: 1,
      dispatchId: "d-1",
      backend: "exec",
      cmd: "make",
      args: [],
      env: {},
      cwd: ".",
      stdinPath: null,
      idleMs: 10 * 60_000,
      wallMs: 2 * 3_600_000,
      stallMs: 5 * 60_000,
      killGraceMs: SPEC_DEFAULTS.killGraceMs,
      graceAfterFinalMs: null,
      pollMs: SPEC_DEFAULTS.pollMs,
      providerRetry: SPEC_DEFAULTS.providerRetry,
      memoryBytes: null,
      maxProcs: null,
      worktree: null,
      passEnv: [],
      keepTmp: false,
      maxTokens: null,
      maxCostUsd: null,
    });
  });

  it("keeps what a spec says, a null grace included, and the fields it does not know", () => {
    const codex = backendFor("codex");
    const spec = resolveSpec(
      {
        backend: "codex",
        cmd: "codex",
        args: ["exec"],
        env: {},
        dispatchId: "given",
        idleMs: 4000,
        graceAfterFinalMs: null,
        providerRetry: { attempts: 7 },
        extra: "kept",
      } as Parameters<typeof resolveSpec>[0],
      codex,
      "/x/folder-name",
    );
    expect(spec).toMatchObject({
      dispatchId: "given",
      idleMs: 4000,
      stallMs: 2000,
      wallMs: codex.defaults.wallMs,
      graceAfterFinalMs: null,
      providerRetry: { attempts: 7, windowMs: SPEC_DEFAULTS.providerRetry.windowMs },
      extra: "kept",
    });
  });

  it("makes cwd and stdinPath absolute against the folder, leaving absolute ones alone", () => {
    const spec = resolveSpec(
      { backend: "exec", cmd: "cat", args: [], env: {}, stdinPath: "brief.md" },
      backendFor("exec"),
      "/x/d",
    );
    expect(absolutePaths(spec, "/x/d")).toMatchObject({ cwd: "/x/d", stdinPath: "/x/d/brief.md" });
    expect(absolutePaths({ ...spec, cwd: "/work", stdinPath: "/in" }, "/x/d")).toMatchObject({
      cwd: "/work",
      stdinPath: "/in",
    });
  });

  it("reads spec.json, refusing a missing one with E_SPEC_INVALID and a newer one with E_SCHEMA_NEWER", () => {
    const dir = scratch();
    expect(() => readSpecFile(dir)).toThrow(expect.objectContaining({ code: "E_SPEC_INVALID" }));
    fs.writeFileSync(fileIn(dir, FILES.spec), JSON.stringify({ schema: 9, cmd: "x" }));
    expect(() => readSpecFile(dir)).toThrow(expect.objectContaining({ code: "E_SCHEMA_NEWER" }));
    fs.writeFileSync(fileIn(dir, FILES.spec), JSON.stringify({ cmd: "x" }));
    expect(readSpecFile(dir)).toMatchObject({ cmd: "x", backend: "exec", args: [], env: {} });
  });
});

describe("the folder's ids and backend", () => {
  it("calls a dispatch by admit.json's id, else spec.json's, else the folder's name", () => {
    const dir = "/h/runs/r/dispatches/n/folder-id";
    expect(dispatchIdOf({ dir, admit: { dispatchId: "a" }, spec: { dispatchId: "s" } })).toBe("a");
    expect(dispatchIdOf({ dir, admit: null, spec: { dispatchId: "s" } })).toBe("s");
    expect(dispatchIdOf({ dir, admit: null, spec: {} })).toBe("folder-id");
  });

  it("gives the agent's processes spec.json's id, never admit.json's: the supervisor reads only the spec", () => {
    expect(agentDispatchId({ dir: "/x/folder-id", spec: { dispatchId: "s" } })).toBe("s");
    expect(agentDispatchId({ dir: "/x/folder-id", spec: null })).toBe("folder-id");
  });

  it("takes the backend from admit.json, else spec.json, and reads an unnamed one as a spec's default", () => {
    expect(backendIdOf({ admit: { backend: "codex" }, spec: { backend: "exec" } })).toBe("codex");
    expect(backendIdOf({ admit: null, spec: { backend: "gemini" } })).toBe("gemini");
    expect(backendIdOf({ admit: null, spec: null })).toBeNull();
    expect(backendOf({ admit: null, spec: null }).id).toBe("exec");
  });

  it("knows where a folder sits in a home, and that a hand-written one sits nowhere", () => {
    expect(placeOf("/h/runs/nightly/dispatches/fix/20261129T081530Z-k3x9qa")).toEqual({
      runDir: "/h/runs/nightly",
      run: "nightly",
      name: "fix",
      dispatchId: "20261129T081530Z-k3x9qa",
    });
    expect(placeOf("/tmp/t-1")).toBeNull();
    expect(placeOf("/h/runs/nightly/other/fix/id")).toBeNull();
  });
});

describe("one event line as people read it", () => {
  it("is the backend's description, or nothing for a line it has nothing to say about", () => {
    const codex = backendFor("codex");
    const started = JSON.stringify({
      type: "item.started",
      item: { id: "i1", type: "command_execution", command: "npm test" },
    });
    expect(humanLine(codex, started)).toBe("$ npm test");
    expect(humanLine(codex, "a line that is not an event")).toBeNull();
    expect(humanLine(backendFor("exec"), "compiling")).toBe("compiling");
  });

  it("is the line itself when the backend throws on it", () => {
    const throwing = {
      ...backendFor("exec"),
      parse: () => {
        throw new Error("bad");
      },
    };
    expect(humanLine(throwing, "raw text")).toBe("raw text");
  });
});

describe("the folder's files and markers", () => {
  it("writes each JSON file stamped with its schema, and reads it back typed", () => {
    const dir = scratch();
    expect(isDispatchFolder(dir)).toBe(false);
    writeFolderJson(dir, FILES.thread, { thread: "th-1", at: "2026-11-29T10:00:00Z" });
    expect(readFolderJson(dir, FILES.thread)).toEqual({
      kind: "ok",
      value: { schema: 1, thread: "th-1", at: "2026-11-29T10:00:00Z" },
    });
    expect(readFolderJson(dir, FILES.proc)).toEqual({ kind: "missing" });
    requestCancel(dir, new Date("2026-11-29T10:00:00Z"));
    expect(fs.readFileSync(fileIn(dir, FILES.cancel), "utf8")).toBe("2026-11-29T10:00:00.000Z\n");
  });

  it("creates an ended exit.json once: a second writer loses and changes nothing", () => {
    const dir = scratch();
    const lost = { reason: "lost" as const, error: { code: "E_SUPERVISOR_LOST" as const, message: "gone" } };
    expect(writeEndedExit(dir, lost, new Date())).toBe(true);
    expect(writeEndedExit(dir, { ...lost, reason: "cancelled" }, new Date())).toBe(false);
    const exit = readFolderJson(dir, FILES.exit);
    expect(exit.kind === "ok" && exit.value).toMatchObject({
      reason: "lost",
      stop: { term: false, kill: false, swept: 0 },
      sawFinal: false,
    });
  });

  it("marks a record seen, and finds and removes a run's live markers", () => {
    const home = scratch();
    const run = runPaths(home, "r");
    const dir = path.join(run.dispatches, "n/d-1");
    const live = run.live;
    fs.mkdirSync(dir, { recursive: true });
    fs.mkdirSync(live);
    expect(isSeen(dir)).toBe(false);
    markSeen(dir, new Date());
    expect(isSeen(dir)).toBe(true);
    writeLiveMarker(run, { dispatchId: "d-1", name: "n", dir, owns: ["src/"] });
    fs.writeFileSync(path.join(live, "torn.json"), "{");
    expect(readLiveMarkers(run)).toEqual([{ schema: 1, dispatchId: "d-1", name: "n", dir, owns: ["src/"] }]);
    removeLiveMarkerOf(dir);
    expect(readLiveMarkers(run)).toEqual([]);
  });
});

describe("record.error, for every status but ok", () => {
  const KEY = "sk-proj-abcdefghijklmnop1234";
  const codexLine = (event: object) => JSON.stringify(event);
  const retry429 = codexLine({
    type: "error",
    message: "Reconnecting... 1/5 (exceeded retry limit, last status: 429 Too Many Requests)",
  });

  /** A codex folder ended as `ending` says, with 30 stderr lines (a key among them) and `events`. */
  function ended(
    ending: {
      reason: ExitReason;
      code?: number | null;
      kind?: ErrorKind | null;
      error?: { code: ErrorCode; message: string } | null;
    },
    events: string[] = [],
  ): string {
    const dir = scratch();
    fs.writeFileSync(fileIn(dir, FILES.spec), JSON.stringify({ schema: 1, backend: "codex", cmd: "codex" }));
    fs.writeFileSync(fileIn(dir, FILES.events), events.map((line) => `${line}\n`).join(""));
    const stderr = Array.from({ length: 30 }, (_, i) =>
      i === 28 ? `\u001b[31mcalling with api_key=${KEY}\u001b[0m` : `line ${i}${"x".repeat(100)}`,
    );
    fs.writeFileSync(fileIn(dir, FILES.stderr), `${stderr.join("\n\n")}\n`);
    writeExit(dir, {
      reason: ending.reason,
      code: ending.code ?? null,
      signal: ending.code === undefined ? "SIGTERM" : null,
      startedAt: "2026-11-30T10:00:00.000Z",
      endedAt: "2026-11-30T10:05:00.000Z",
      durationMs: 300_000,
      pid: 4242,
      sawFinal: false,
      thread: null,
      openToolCalls: [],
      retries: 0,
      lastEventAt: null,
      stalled: false,
      stop: { term: true, kill: false, swept: 0 },
      error: ending.error ?? null,
      kind: ending.kind ?? null,
      adoptions: 0,
      containment: null,
      cpuSeconds: null,
      peakMemoryBytes: null,
      oomKills: null,
    });
    return dir;
  }

  it.each([
    [
      "a CLI that exited 2 with nothing to say",
      { reason: "exited", code: 2 },
      [],
      "failed",
      "cli",
      "exited",
      "exit code 2",
    ],
    [
      "a cancel by a signal",
      {
        reason: "cancelled",
        error: { code: "E_SUPERVISOR_SIGNALLED", message: "the supervisor got SIGTERM" },
      },
      [],
      "cancelled",
      "cancelled",
      "E_SUPERVISOR_SIGNALLED",
      "the supervisor got SIGTERM",
    ],
    [
      "the wall limit",
      { reason: "wall-timeout" },
      [],
      "timeout",
      "timeout",
      "wall-timeout",
      "still running after 1h30m (--wall 1h30m)",
    ],
    [
      "silence after a 429 retry",
      { reason: "idle-timeout", kind: "rate-limit" },
      [retry429],
      "limit",
      "rate-limit",
      "idle-timeout",
      "exceeded retry limit, last status: 429 Too Many Requests",
    ],
    [
      "silence with no retry",
      { reason: "idle-timeout" },
      [],
      "timeout",
      "timeout",
      "idle-timeout",
      "no output for 15m (--idle 15m)",
    ],
    [
      "a command that cannot start",
      { reason: "spawn-failed", error: { code: "E_SPAWN_FAILED", message: "spawn codex ENOENT" } },
      [],
      "failed",
      "spawn",
      "E_SPAWN_FAILED",
      "spawn codex ENOENT",
    ],
    [
      "a supervisor bug",
      { reason: "supervisor-error", error: { code: "E_INTERNAL", message: "x is not a function" } },
      [],
      "failed",
      "supervisor",
      "E_INTERNAL",
      "x is not a function",
    ],
    [
      "a supervisor that died",
      { reason: "lost", error: { code: "E_SUPERVISOR_LOST", message: "the supervisor is gone" } },
      [],
      "lost",
      "lost",
      "E_SUPERVISOR_LOST",
      "the supervisor is gone",
    ],
  ] as const)(
    "records %s with its kind, code, message and stderr tail",
    async (_what, ending, events, status, kind, code, message) => {
      const dir = ended(ending, [...events]);
      const record = await writeRecord(dir, systemClock);
      expect(record).toMatchObject({ status, error: { code, kind, message, retryAfter: null } });
      const tail = record?.error?.tail ?? [];
      expect(tail).toHaveLength(20);
      expect(tail[0]).toBe(`line 10${"x".repeat(100)}`);
      expect(tail.at(-1)).toBe(`line 29${"x".repeat(100)}`);
      expect(tail.at(-2)).toBe("calling with api_key=[redacted]");
      expect(Buffer.byteLength(tail.map((line) => `${line}\n`).join(""))).toBeLessThanOrEqual(4096);
      expect(ERROR_KINDS).toContain(record?.error?.kind);
    },
  );

  it("redacts and caps a message catherd wrote into exit.json", async () => {
    const dir = ended({
      reason: "spawn-failed",
      error: {
        code: "E_SPAWN_FAILED",
        message: `cannot start with OPENAI_API_KEY=${KEY} ${"y".repeat(5000)}`,
      },
    });
    const message = (await writeRecord(dir, systemClock))?.error?.message ?? "";
    expect(message).not.toContain(KEY);
    expect(message).toContain("OPENAI_API_KEY=[redacted]");
    expect(message.length).toBeLessThanOrEqual(2000);
  });

  it("has no error for ok", async () => {
    const dir = ended({ reason: "exited", code: 0 }, [
      codexLine({ type: "item.completed", item: { id: "i", type: "agent_message", text: "done" } }),
      codexLine({ type: "turn.completed", usage: { input_tokens: 1, output_tokens: 1 } }),
    ]);
    expect(await writeRecord(dir, systemClock)).toMatchObject({ status: "ok", error: null, reply: "done" });
  });
});
