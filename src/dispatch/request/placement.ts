import { CatherdError } from "../../domain/errors.js";
import { argumentName } from "../../domain/option-def.js";
import type { AdmitPlacement } from "../../domain/schemas.js";
import { ENGINES, type EngineName, PLACEMENTS, type Placement } from "../../domain/vocab.js";
import { ENGINE_OPTIONS } from "../../engines/engine-registry.js";
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

/** `--run-placement`'s values: a placement, or `none` to forget the run's. */
export const RUN_PLACEMENTS = [...PLACEMENTS, "none"] as const;

export function parsePlacement(raw: {
  placement?: string | undefined;
  runPlacement?: string | undefined;
  engineOptions?: Partial<Record<EngineName, readonly string[]>> | undefined;
  environment: NodeJS.ProcessEnv;
}): PlacementRequest {
  const fix = `give one of ${PLACEMENTS.join(", ")}`;
  const placement = raw.placement === undefined ? null : oneOf("--placement", raw.placement, PLACEMENTS, fix);
  const runPlacement =
    raw.runPlacement === undefined
      ? null
      : oneOf(
          "--run-placement",
          raw.runPlacement,
          RUN_PLACEMENTS,
          `give one of ${RUN_PLACEMENTS.join(", ")}`,
        );
  const env = raw.environment.CATHERD_PLACEMENT;
  const fromEnvironment =
    env === undefined || env === ""
      ? null
      : oneOf(
          "CATHERD_PLACEMENT",
          env,
          PLACEMENTS,
          `set CATHERD_PLACEMENT to one of ${PLACEMENTS.join(", ")}`,
        );
  return {
    placement,
    runPlacement,
    fromEnvironment,
    engineOptions: Object.fromEntries(
      ENGINES.flatMap((engine) => {
        const given = raw.engineOptions?.[engine] ?? [];
        return given.length === 0 ? [] : [[engine, given.map(ENGINE_OPTIONS[engine].check)]];
      }),
    ),
  };
}

/**
 * The placement a dispatch gets: `--placement`, else `--run-placement` (this dispatch is the run's first
 * under it), else the run's (run.json), else `$CATHERD_PLACEMENT`, else local. The run's placement comes
 * before the environment's: it is said about this run, the environment about every run of a session.
 */
export function resolvePlacement(asked: PlacementRequest, runs: Placement | null): Placement {
  const run = asked.runPlacement === null ? runs : asked.runPlacement === "none" ? null : asked.runPlacement;
  return asked.placement ?? run ?? asked.fromEnvironment ?? "local";
}

/**
 * admit.json's `placement` for a dispatch placed so; undefined for `local`. An engine's options given to a
 * dispatch that does not go to that engine are refused: they would be silently ignored.
 */
export function admitPlacementOf(placement: Placement, asked: PlacementRequest): AdmitPlacement | undefined {
  for (const engine of ENGINES) {
    if (engine === placement || (asked.engineOptions[engine] ?? []).length === 0) continue;
    const flag = `--${ENGINE_OPTIONS[engine].flag}`;
    const where = placement === "local" ? "this one runs locally" : `this one is placed on ${placement}`;
    throw new CatherdError("E_INPUT_INVALID", `${flag} is for a dispatch placed on ${engine}, and ${where}`, {
      fix: `add --placement ${engine} (or --run-placement ${engine}), or leave ${flag} out`,
    });
  }
  if (placement === "local") return undefined;
  return { engine: placement, options: asked.engineOptions[placement] ?? [] };
}

function oneOf<T extends string>(field: string, value: string, values: readonly T[], fix: string): T {
  if ((values as readonly string[]).includes(value)) return value as T;
  throw new CatherdError(
    "E_INPUT_INVALID",
    `${field} ${JSON.stringify(value.slice(0, 80))} is not a placement`,
    {
      fix,
    },
  );
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
      description:
        "where the supervisor runs: on this host, or as a Slurm job (the run's folder on storage every node shares)",
      choices: PLACEMENTS,
      default: "the run's (--run-placement), else $CATHERD_PLACEMENT, else local",
    },
    "run-placement": {
      type: "string",
      value: "<where>",
      description:
        "the placement of this and the run's later dispatches (remembered in run.json); none forgets it",
      choices: RUN_PLACEMENTS,
    },
    ...Object.fromEntries(
      ENGINES.map((engine) => [
        ENGINE_OPTIONS[engine].flag,
        {
          type: "string",
          value: "<option>",
          multiple: true,
          description: ENGINE_OPTIONS[engine].description,
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
            placement: admit.placement?.engine ?? "local",
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
        ENGINES.map((engine) => [engine, listFlag(raw, argumentName(ENGINE_OPTIONS[engine].flag))]),
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
