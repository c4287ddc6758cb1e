import type { EngineName } from "../domain/vocab.js";
import type { Engine, EngineOptions } from "./engine.js";
import { slurmOptions } from "./slurm/options.js";

// The engines a dispatch can be placed on, by the name placement.json and `--placement` give them
// (specs/architecture.md, "Engines"). Each is loaded the first time it is asked for: a dispatch that runs
// locally, and a reader of local dispatches, never load an engine's code.

const LOADERS: Record<EngineName, () => Promise<Engine>> = {
  slurm: async () => (await import("./slurm/slurm-engine.js")).slurmEngine,
};

/** Each engine's options flag (`--slurm-opt`), loaded with the request that may give it. */
export const ENGINE_OPTIONS: Readonly<Record<EngineName, EngineOptions>> = { slurm: slurmOptions };

/** The engine of that name, loaded. */
export function engineNamed(name: EngineName): Promise<Engine> {
  return LOADERS[name]();
}
