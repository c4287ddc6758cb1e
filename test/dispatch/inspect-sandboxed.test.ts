import { describe, expect, it } from "vitest";
import { type FolderProbe, inspectDispatch } from "../../src/dispatch/read/inspect.js";
import type { HostIdentity } from "../../src/domain/state/host.js";
import type { FolderJson, FolderJsonFile } from "../../src/folder/read.js";
import type { FileRead } from "../../src/infra/json-file.js";
import { FakeClock } from "../helpers/fake-clock.js";

// A sandboxed dispatch whose supervisor died before proc.json (specs/sandbox.md, "A supervisor's death while
// the sandbox goes up"): its agent never ran, and the processes that still carry its CATHERD_DISPATCH are
// its sandbox ending by itself — lost, for a reader to record, never an orphan nobody can adopt.

const NOW = Date.parse("2026-12-06T12:00:00.000Z");
const ADMITTED = new Date(NOW - 60_000).toISOString();
const READER: HostIdentity = { name: "reader", bootId: "boot-1", pidNamespace: "4026531836" };
const admit = {
  dispatchId: "d-sandboxed",
  backend: "exec",
  admittedAt: ADMITTED,
  dispatcher: { pid: 101, startTime: "1" },
};
const supervisor = { pid: 202, startTime: "2", startedAt: ADMITTED };
const unsandboxed = { dispatchId: "d-sandboxed", backend: "exec", cmd: "agent" };
const sandboxed = {
  ...unsandboxed,
  sandbox: { mode: "files+net", allowWrite: [], denyRead: [], allowNet: [] },
};

function probe(files: Record<string, unknown>): FolderProbe {
  return {
    read: <F extends FolderJsonFile>(name: F): FileRead<FolderJson<F>> => {
      const value = files[name];
      return value === undefined ? { kind: "missing" } : { kind: "ok", value: value as FolderJson<F> };
    },
    exists: (name) => files[name] !== undefined,
    isAlive: () => false,
    host: () => READER,
    lock: () => ({ kind: "missing" }),
    carriesDispatch: (dispatchId) => dispatchId === "d-sandboxed",
    birthMs: () => NOW - 60_000,
  };
}

const stateOf = (spec: unknown) =>
  inspectDispatch("/nonexistent/d-sandboxed", {
    clock: new FakeClock({ wall: NOW }),
    probe: probe({ "admit.json": admit, "supervisor.json": supervisor, "spec.json": spec }),
  });

describe("a reader of a start whose supervisor died before proc.json", () => {
  it("finds an unsandboxed agent still running an orphan, for cancel to end", () => {
    expect(stateOf(unsandboxed)).toMatchObject({ state: "orphaned", duty: null });
  });

  it("finds a sandboxed one lost, to record: its sandbox ends by itself, the agent never run", () => {
    expect(stateOf(sandboxed)).toMatchObject({ state: "lost", duty: "record" });
  });
});
