import { describe, expect, it } from "vitest";
import { CatherdError } from "../../src/domain/errors.js";
import { sightOf, silentSight, UNREACHABLE_LOST_MS } from "../../src/engines/ssh/sight.js";

// What the SSH engine says of a supervisor it started (specs/placement.md, "Liveness and cancel"): the
// host's answer, and — when the host does not answer — how long the supervisor's lock, on the shared
// folder a live supervisor keeps fresh whatever the network, has been silent. Pure tables.

const error = new CatherdError("E_ENGINE_UNCONFIGURED", "cannot ask box: ssh box failed: Connection refused");

describe("a supervisor the host answered about", () => {
  it.each<[string, { running: boolean; cancelled: boolean }, Record<string, unknown>]>([
    [
      "running there",
      { running: true, cancelled: false },
      { phase: "running", node: "box", ending: { started: null } },
    ],
    [
      "gone there",
      { running: false, cancelled: false },
      {
        phase: "ended",
        ending: {
          started: { reason: "lost", code: "E_SUPERVISOR_LOST", state: "GONE" },
          unstarted: { words: expect.stringMatching(/; its supervisor never started$/) },
        },
      },
    ],
    [
      "gone after the folder asked it to stop",
      { running: false, cancelled: true },
      { phase: "ended", ending: { started: { reason: "cancelled", code: "cancelled", state: "CANCELLED" } } },
    ],
  ])("is %s", (_title, seen, expected) => {
    expect(sightOf("box", "4242", seen)).toMatchObject({ kind: "known", ...expected });
  });
});

describe("a supervisor whose host does not answer", () => {
  it.each<[string, number, Record<string, unknown>]>([
    ["silent a moment: unreachable, nothing recorded", 45_000, { kind: "unreachable", error }],
    ["silent just under the limit: still unreachable", UNREACHABLE_LOST_MS - 1, { kind: "unreachable" }],
    [
      "silent past the limit: ended, lost",
      UNREACHABLE_LOST_MS + 1,
      {
        kind: "known",
        phase: "ended",
        ending: {
          started: {
            reason: "lost",
            code: "E_SUPERVISOR_LOST",
            state: "UNREACHABLE",
            words:
              "ssh box: supervisor 4242 has not refreshed its lock for 10 min, and box does not answer: cannot ask box: ssh box failed: Connection refused",
          },
        },
      },
    ],
  ])("is %s", (_title, silentMs, expected) => {
    expect(silentSight({ host: "box", pid: "4242", silentMs, error })).toMatchObject(expected);
  });
});
