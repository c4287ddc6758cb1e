import { createJsonExclusive, writeJsonAtomic } from "../src/infra/atomic.js";
import { type Clock, systemClock } from "../src/infra/clock.js";
import { withWriteFaults } from "./test-hooks.js";

/** The writes whose failure the supervisor must survive; faults are injected here in tests. */
export interface FileWriter {
  writeJson(file: string, value: unknown): void;
  createJson(file: string, value: unknown): boolean;
}

/** Everything the supervisor takes from the world, built at its entry point and faked in tests. */
export interface SupervisorDeps {
  clock: Clock;
  files: FileWriter;
}

export const systemFiles: FileWriter = { writeJson: writeJsonAtomic, createJson: createJsonExclusive };

export function systemDeps(): SupervisorDeps {
  return { clock: systemClock, files: withWriteFaults(systemFiles) };
}
