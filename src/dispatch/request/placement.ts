import { CatherdError } from "../../domain/errors.js";
import type { AdmitPlacement } from "../../domain/schemas.js";
import { PLACEMENTS, type Placement } from "../../domain/vocab.js";

// Where a dispatch's supervisor runs (specs/placement.md), as the request asks it: `--placement`, the
// run's remembered placement (`--run-placement`, run.json), `$CATHERD_PLACEMENT`, in that order, else
// local; and the options given to the engine as they are (`--slurm-opt`). Validated before anything is
// written; resolved against run.json by the dispatch use case, before admission.

/** The placement flags of a request, validated. */
export interface PlacementRequest {
  /** `--placement`; null: the run's, else $CATHERD_PLACEMENT, else local. */
  placement: Placement | null;
  /** `--run-placement`: remembered in run.json for the run's later dispatches; `none` forgets it. */
  runPlacement: Placement | "none" | null;
  /** `$CATHERD_PLACEMENT`, where set. */
  fromEnvironment: Placement | null;
  /** `--slurm-opt`, each one sbatch option given as it is. */
  slurmOptions: string[];
}

/** `--run-placement`'s values: a placement, or `none` to forget the run's. */
export const RUN_PLACEMENTS = [...PLACEMENTS, "none"] as const;

/**
 * sbatch options that would change what the job runs or how sbatch answers, which the folder protocol
 * depends on: `--wrap` replaces the batch script, `--array` runs it many times, `--wait` holds sbatch
 * until the job ends, `--test-only` submits nothing.
 */
const REFUSED_SBATCH_OPTIONS = ["--wrap", "--array", "-a", "--wait", "-W", "--test-only"];
const MAX_OPTION_CHARS = 1000;

export function parsePlacement(raw: {
  placement?: string | undefined;
  runPlacement?: string | undefined;
  slurmOptions?: readonly string[] | undefined;
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
    slurmOptions: (raw.slurmOptions ?? []).map(checkOption),
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
 * admit.json's `placement` for a dispatch placed so; undefined for `local`. `--slurm-opt` given to a
 * dispatch that does not go to Slurm is refused: it would be silently ignored.
 */
export function admitPlacementOf(placement: Placement, asked: PlacementRequest): AdmitPlacement | undefined {
  if (placement === "local") {
    if (asked.slurmOptions.length > 0) {
      throw new CatherdError(
        "E_INPUT_INVALID",
        "--slurm-opt is for a dispatch placed on Slurm, and this one runs locally",
        { fix: "add --placement slurm (or --run-placement slurm), or leave --slurm-opt out" },
      );
    }
    return undefined;
  }
  return { engine: placement, options: asked.slurmOptions };
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

/** One `--slurm-opt`: one line, an option (it starts with `-`), not one that breaks the job's protocol. */
function checkOption(option: string): string {
  const fix = "give each sbatch option whole, its value attached: --slurm-opt=--partition=gpu";
  const shown = JSON.stringify(option.slice(0, 80));
  if (option.length === 0 || option.length > MAX_OPTION_CHARS || /[\0\n\r]/.test(option)) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `--slurm-opt ${shown} must be one line of at most ${MAX_OPTION_CHARS} characters`,
      { fix },
    );
  }
  // A word that is not an option would be taken by sbatch as the batch script to run.
  if (!option.startsWith("-")) {
    throw new CatherdError("E_INPUT_INVALID", `--slurm-opt ${shown} is not an sbatch option`, { fix });
  }
  const name = option.startsWith("--") ? (option.split("=")[0] as string) : option.slice(0, 2);
  if (REFUSED_SBATCH_OPTIONS.includes(name)) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `--slurm-opt ${name} would change what the job runs or how sbatch answers, which catherd relies on`,
      { fix: `leave ${name} out: catherd submits one job that runs the supervisor` },
    );
  }
  return option;
}
