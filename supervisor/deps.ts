import { atomicWriter, type JsonWriter } from "../src/folder/write.js";
import { type Clock, systemClock } from "../src/infra/clock.js";
import { withWallShift, withWriteFaults } from "./test-hooks.js";

/** The writes whose failure the supervisor must survive; faults are injected here in tests. */
export type FileWriter = JsonWriter;

/** Everything the supervisor takes from the world, built at its entry point and faked in tests. */
export interface SupervisorDeps {
  clock: Clock;
  files: FileWriter;
}

export const systemFiles: FileWriter = atomicWriter;

export function systemDeps(): SupervisorDeps {
  return { clock: withWallShift(systemClock), files: withWriteFaults(systemFiles) };
}
