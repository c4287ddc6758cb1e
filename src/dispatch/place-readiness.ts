import type { Backend } from "../backends/types.js";
import type { EngineName } from "../domain/vocab.js";
import type { CliThere, PlacementWhere, PlaceReadiness } from "../engines/engine.js";
import { cliAsked, type Readiness, readinessThere } from "./request/readiness.js";
import { supervisorProgram } from "./start/launch.js";

// Readiness where a placement puts the supervisor (specs/placement.md, "Readiness on the host"): for an
// engine that starts it on another host, that host is asked — in one look, through the engine — for what
// the start needs (catherd's home shared, node, catherd) and for each CLI the dispatch would run, which
// is then judged by its backend as this host's own readiness judges it. What `doctor --placement` shows
// and what a dispatch placed there is refused by.

/** A CLI to ask for: its backend and its executable as this host resolved it (tried first there), or null. */
export interface CliWanted {
  backend: Backend;
  here: string | null;
}

/** One CLI as the host answered and as its backend judges it. */
export interface CliJudged {
  backend: Backend;
  there: CliThere;
  judged: Readiness;
}

/** What the host said: its checks and refusal, and each CLI judged (none when it was not reached). */
export interface PlacedReadiness {
  report: PlaceReadiness;
  clis: CliJudged[];
}

/** The readiness of `engine`'s host for `wanted`; null when the engine has none (its CLIs are this host's). */
export async function placedReadiness(
  engine: EngineName,
  where: PlacementWhere,
  wanted: readonly CliWanted[],
): Promise<PlacedReadiness | null> {
  const { engineNamed } = await import("../engines/engine-registry.js");
  const loaded = await engineNamed(engine);
  if (loaded.readiness === undefined) return null;
  const report = await loaded.readiness(where, {
    supervisor: { node: process.execPath, program: supervisorProgram() },
    clis: wanted.map((w) => cliAsked(w.backend, w.here)),
  });
  const clis = report.clis.flatMap((there, i): CliJudged[] => {
    const backend = wanted[i]?.backend;
    return backend === undefined
      ? []
      : [{ backend, there, judged: readinessThere(backend, there, report.host) }];
  });
  return { report, clis };
}
