import { CatherdError } from "../../domain/errors.js";
import { argumentName } from "../../domain/option-def.js";
import { type PlacementParts, placementParts, spelledPlacement } from "../../domain/placement.js";
import type { AdmitPlacement } from "../../domain/schemas.js";
import { ENGINES, type EngineName, PLACEMENTS, type Placement } from "../../domain/vocab.js";
import type { EngineOptions } from "../../engines/engine.js";
import { ENGINE_OPTIONS, ENGINE_TARGETS } from "../../engines/engine-registry.js";
import type { Concern } from "./concern.js";

// Where a dispatch's supervisor runs (specs/placement.md), as the request asks it: `--placement`, the
// run's remembered placement (`--run-placement`, run.json), `$CATHERD_PLACEMENT`, in that order, else
// local; and the options given to an engine as they are (each engine's flag, src/engines/). Validated before anything is
// written; resolved against run.json by the dispatch use case, before admission.

/** The placement flags of a request, validated. */
export interface PlacementRequest {
  /** `--placement`; null: the run's, else $CATHERD_PLACEMENT, else local. */
  placement: Placement | null;
  /** `--run-placement`: remembered in run.json for the run's later dispatches; `none` forgets it. */
  runPlacement: Placement | "none" | null;
  /** `$CATHERD_PLACEMENT`, where set. */
  fromEnvironment: Placement | null;
  /** Options for an engine, each given as it is (`--slurm-opt`), by the engine they are for. */
  engineOptions: Partial<Record<EngineName, string[]>>;
}

/** The placements as help names them: `local`, an engine, `ssh:<host>` for an engine that takes a target. */
export const PLACEMENT_SPELLINGS: readonly string[] = PLACEMENTS.map((kind) =>
  kind === "local" ? kind : (ENGINE_TARGETS[kind]?.value ?? kind),
);

export function parsePlacement(raw: {
  placement?: string | undefined;
  runPlacement?: string | undefined;
  engineOptions?: Partial<Record<EngineName, readonly string[]>> | undefined;
  environment: NodeJS.ProcessEnv;
}): PlacementRequest {
  const fix = `give one of ${PLACEMENT_SPELLINGS.join(", ")}`;
  const placement = raw.placement === undefined ? null : checkedPlacement("--placement", raw.placement, fix);
  const runPlacement =
    raw.runPlacement === undefined
      ? null
      : raw.runPlacement === "none"
        ? "none"
        : checkedPlacement("--run-placement", raw.runPlacement, `${fix}, or none`);
  const env = raw.environment.CATHERD_PLACEMENT;
  const fromEnvironment =
    env === undefined || env === ""
      ? null
      : checkedPlacement(
          "CATHERD_PLACEMENT",
          env,
          `set CATHERD_PLACEMENT to one of ${PLACEMENT_SPELLINGS.join(", ")}`,
        );
  return {
    placement,
    runPlacement,
    fromEnvironment,
    engineOptions: Object.fromEntries(
      ENGINES.flatMap((engine) => {
        const given = raw.engineOptions?.[engine] ?? [];
        const options = ENGINE_OPTIONS[engine];
        return given.length === 0 || options === undefined ? [] : [[engine, given.map(options.check)]];
      }),
    ),
  };
}

/**
 * The placement a dispatch gets: `--placement`, else `--run-placement` (this dispatch is the run's first
 * under it), else the run's (run.json, checked again as the request's are), else `$CATHERD_PLACEMENT`,
 * else local. The run's placement comes before the environment's: it is said about this run, the
 * environment about every run of a session.
 */
export function resolvePlacement(asked: PlacementRequest, runs: string | null): Placement {
  const remembered =
    runs === null
      ? null
      : checkedPlacement("the run's placement (run.json)", runs, "forget it with --run-placement none");
  const run =
    asked.runPlacement === null ? remembered : asked.runPlacement === "none" ? null : asked.runPlacement;
  return asked.placement ?? run ?? asked.fromEnvironment ?? "local";
}

/**
 * admit.json's `placement` for a dispatch placed so; undefined for `local`. An engine's options given to a
 * dispatch that does not go to that engine are refused: they would be silently ignored. The target is
 * checked by its engine again: whatever the placement came from, no unchecked target reaches an engine.
 */
export function admitPlacementOf(placement: Placement, asked: PlacementRequest): AdmitPlacement | undefined {
  const { engine, target } = checkedParts(
    "the placement",
    placement,
    `give one of ${PLACEMENT_SPELLINGS.join(", ")}`,
  );
  for (const [other, given] of Object.entries(asked.engineOptions) as [EngineName, string[]][]) {
    const options = ENGINE_OPTIONS[other];
    if (other === engine || given.length === 0 || options === undefined) continue;
    const flag = `--${options.flag}`;
    const where = engine === null ? "this one runs locally" : `this one is placed on ${engine}`;
    throw new CatherdError("E_INPUT_INVALID", `${flag} is for a dispatch placed on ${other}, and ${where}`, {
      fix: `add --placement ${other} (or --run-placement ${other}), or leave ${flag} out`,
    });
  }
  if (engine === null) return undefined;
  return { engine, options: asked.engineOptions[engine] ?? [], ...(target === null ? {} : { target }) };
}

/** `value` as a placement whose target its engine has checked; else E_INPUT_INVALID with `fix`. */
function checkedPlacement(field: string, value: string, fix: string): Placement {
  const { engine, target } = checkedParts(field, value, fix);
  return spelledPlacement(engine, target);
}

/**
 * The parts of `value`: a known kind, and a target exactly where its engine takes one, checked by the
 * engine (ENGINE_TARGETS); else E_INPUT_INVALID.
 */
export function checkedParts(field: string, value: string, fix: string): PlacementParts {
  const shown = JSON.stringify(value.slice(0, 80));
  const parts = placementParts(value);
  if (parts === null)
    throw new CatherdError("E_INPUT_INVALID", `${field} ${shown} is not a placement`, { fix });
  if (parts.engine === null) return parts;
  const takes = ENGINE_TARGETS[parts.engine];
  if (takes === undefined && parts.target !== null) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `${field} ${shown}: ${parts.engine} takes no target after its name`,
      {
        fix,
      },
    );
  }
  if (takes !== undefined && parts.target === null) {
    throw new CatherdError("E_INPUT_INVALID", `${field} ${shown} names no target: give ${takes.value}`, {
      fix,
    });
  }
  return {
    engine: parts.engine,
    target: takes === undefined || parts.target === null ? null : takes.check(parts.target),
  };
}

/** The placement concern: `--placement`, `--run-placement` and each engine's own options flag. */
/** The placement flags as given; an engine's own flag under its argumentName (`slurmOpt`). */
export interface RawPlacementFlags {
  placement?: string | undefined;
  runPlacement?: string | undefined;
  [engineFlag: `${string}Opt`]: readonly string[] | undefined;
}

export const placement = {
  options: {
    placement: {
      type: "string",
      value: "<where>",
      description: `where the supervisor runs: on this host, as a Slurm job, or on a host over ssh (the run's folder on storage every host shares at the same path): ${PLACEMENT_SPELLINGS.join(", ")}`,
      default: "the run's (--run-placement), else $CATHERD_PLACEMENT, else local",
    },
    "run-placement": {
      type: "string",
      value: "<where>",
      description: `the placement of this and the run's later dispatches (remembered in run.json): ${PLACEMENT_SPELLINGS.join(", ")}; none forgets it`,
    },
    ...Object.fromEntries(
      Object.values(ENGINE_OPTIONS).map((options) => [
        options.flag,
        {
          type: "string",
          value: "<option>",
          multiple: true,
          description: options.description,
        } as const,
      ]),
    ),
  },
  // admit.json's `placement`, once the use case has resolved where (absent: local).
  toAdmit: ({ placement }) => {
    const placed = admitPlacementOf(placement.placement ?? "local", placement);
    return placed === undefined ? {} : { placement: placed };
  },
  // Every attempt of a chain goes where its first went; a follow-up is placed anew.
  carry: ({ admit }, to) =>
    to.kind === "follow-up" || admit == null
      ? {}
      : {
          placement: {
            placement: spelledPlacement(admit.placement?.engine ?? null, admit.placement?.target ?? null),
            runPlacement: null,
            fromEnvironment: null,
            engineOptions:
              admit.placement === undefined ? {} : { [admit.placement.engine]: admit.placement.options },
          },
        },
  validate: (raw, { environment }) => ({
    placement: parsePlacement({
      placement: raw.placement,
      runPlacement: raw.runPlacement,
      engineOptions: Object.fromEntries(
        (Object.entries(ENGINE_OPTIONS) as [EngineName, EngineOptions][]).map(([engine, options]) => [
          engine,
          listFlag(raw, argumentName(options.flag)),
        ]),
      ),
      environment,
    }),
  }),
} satisfies Concern<RawPlacementFlags, { placement: PlacementRequest }>;

/** An engine's flag as given: a list, one value, or none. */
function listFlag(raw: RawPlacementFlags, key: string): readonly string[] {
  const value: unknown = (raw as Record<string, unknown>)[key];
  if (typeof value === "string") return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
