import { CatherdError } from "../../domain/errors.js";
import type { EngineOptions } from "../engine.js";

// `--slurm-opt`: sbatch options given to the job as they are (specs/placement.md, "The sbatch call").
// Checked when the request is read, before anything is written: pure, and loaded with the request.

/**
 * sbatch options that would change what the job runs or how sbatch answers, which the folder protocol
 * depends on: `--wrap` replaces the batch script, `--array` runs it many times, `--wait` holds sbatch
 * until the job ends, `--test-only` submits nothing.
 */
const REFUSED_SBATCH_OPTIONS = ["--wrap", "--array", "-a", "--wait", "-W", "--test-only"];
const MAX_OPTION_CHARS = 1000;

export const slurmOptions: EngineOptions = {
  flag: "slurm-opt",
  description:
    "an sbatch option for the job, given as it is, its value attached: --slurm-opt=--partition=gpu",
  check: checkOption,
};

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
