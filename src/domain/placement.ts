import { z } from "zod";
import { ENGINES, type EngineName, type Placement } from "./vocab.js";

// A placement as `--placement`, `--run-placement`, `$CATHERD_PLACEMENT` and run.json spell it
// (specs/placement.md, "Placement"): `local`, an engine's name, or an engine and its target after a colon
// (`ENGINE:TARGET`, the host of an engine that starts the supervisor on a host). What a target may hold
// is its engine's to say (its check, src/engines/); this only bounds it, so that a stored value that
// passes here is still checked by the engine before it is used.

/** A target's bound: a host name of DNS's 253, a user and a little more. */
export const MAX_TARGET_CHARS = 255;

/** How many hosts a run may cap (`--max-parallel-host`): run.json stays small. */
export const MAX_HOST_CAPS = 64;

/** A placement taken apart: no engine for `local`; the target after the engine's name, else null. */
export interface PlacementParts {
  engine: EngineName | null;
  target: string | null;
}

/** The parts of `value`, or null when it is no placement (an unknown kind, an unbounded target). */
export function placementParts(value: string): PlacementParts | null {
  const colon = value.indexOf(":");
  const kind = colon === -1 ? value : value.slice(0, colon);
  const target = colon === -1 ? null : value.slice(colon + 1);
  if (kind === "local") return target === null ? { engine: null, target: null } : null;
  if (!(ENGINES as readonly string[]).includes(kind)) return null;
  if (target !== null && !boundedTarget(target)) return null;
  return { engine: kind as EngineName, target };
}

/** The placement that names `engine` (and its target): the spelling placementParts reads back. */
export function spelledPlacement(engine: EngineName | null, target: string | null): Placement {
  if (engine === null) return "local";
  return target === null ? engine : `${engine}:${target}`;
}

/** At most MAX_TARGET_CHARS, none of them an ASCII control character (a newline, a NUL, DEL). */
function boundedTarget(target: string): boolean {
  if (target.length > MAX_TARGET_CHARS) return false;
  return [...target].every((c) => {
    const code = c.charCodeAt(0);
    return code > 0x1f && code !== 0x7f;
  });
}

/**
 * A placement on disk (run.json's `placement`): a kind, or an engine with its bounded target — the pattern
 * placementParts accepts, so that the file's JSON Schema says it too.
 */
export const placementSchema = z
  .string()
  .regex(
    new RegExp(`^(?:local|(?:${ENGINES.join("|")})(?::[^\\u0000-\\u001f\\u007f]{0,${MAX_TARGET_CHARS}})?)$`),
  );
