import { describe, expect, it } from "vitest";
import { type DispatchObservation, dispatchState } from "../../src/domain/state.js";

const base: DispatchObservation = {
  hasRecord: false,
  hasExit: false,
  hasSupervisor: false,
  supervisorAlive: false,
  agentAlive: false,
  cancelRequested: false,
  dispatcherAlive: false,
  ageMs: 0,
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
      "record.json written, whatever else",
      { hasRecord: true, hasExit: false, supervisorAlive: true },
      "recorded",
    ],
    [
      "supervisor gone within the grace: still lost, not starting",
      { hasSupervisor: true, ageMs: 10 },
      "lost",
    ],
  ];
  for (const [title, observation, state] of cases) {
    it(`is ${state} when ${title}`, () => {
      expect(dispatchState({ ...base, ...observation })).toBe(state);
    });
  }
});
