import type { EngineName } from "../domain/vocab.js";
import type { Engine, EngineOptions, EngineTarget } from "./engine.js";
import { slurmOptions } from "./slurm/options.js";
import { sshTarget } from "./ssh/host.js";

// The engines a dispatch can be placed on, by the name placement.json and `--placement` give them
// (specs/architecture.md, "Engines"). Each is loaded the first time it is asked for: a dispatch that runs
// locally, and a reader of local dispatches, never load an engine's code.

const LOADERS: Record<EngineName, () => Promise<Engine>> = {
  slurm: async () => (await import("./slurm/slurm-engine.js")).slurmEngine,
  ssh: async () => (await import("./ssh/ssh-engine.js")).sshEngine,
};

/** The engines' options flags (`--slurm-opt`), loaded with the request that may give them; not every engine has one. */
export const ENGINE_OPTIONS: Readonly<Partial<Record<EngineName, EngineOptions>>> = { slurm: slurmOptions };

/** The engines that take a target after their name (`ssh:HOST`), with its check: loaded with the request. */
export const ENGINE_TARGETS: Readonly<Partial<Record<EngineName, EngineTarget>>> = { ssh: sshTarget };

/** The engine of that name, loaded. */
export function engineNamed(name: EngineName): Promise<Engine> {
  return LOADERS[name]();
}
