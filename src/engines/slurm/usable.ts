import { CatherdError } from "../../domain/errors.js";
import { NOT_PLACED_FIX, runSlurm, type SlurmCallOptions } from "./command.js";
import { saysUnconfigured } from "./output.js";

// Whether Slurm can take a job from this host before a dispatch is admitted for it (specs/placement.md,
// "Placement"): an sbatch installed without a configuration, or with a controller that does not answer,
// would be refused at every submission, each leaving a failed dispatch behind. One `sinfo` call asks the
// controller the least it can answer.

/**
 * Null when Slurm answers from this host; else the refusal to admit with: E_ENGINE_UNCONFIGURED (no
 * configuration, no controller), E_ENGINE_TIMEOUT, or E_ENGINE_REFUSED with sinfo's own words. A sinfo
 * that is not installed says nothing either way: the submission speaks for sbatch.
 */
export async function slurmUnusable(options: SlurmCallOptions = {}): Promise<CatherdError | null> {
  const result = await runSlurm("sinfo", ["--noheader", "--format=%P"], options);
  if (result.ok || result.failure === "missing") return null;
  const asked = "cannot place the dispatch on Slurm";
  if (result.failure === "timeout") {
    return new CatherdError("E_ENGINE_TIMEOUT", `${asked}: ${result.words}`, {
      fix: `check the controller answers (scontrol ping), then try again, ${NOT_PLACED_FIX}`,
    });
  }
  if (saysUnconfigured(result.stderr)) {
    return new CatherdError(
      "E_ENGINE_UNCONFIGURED",
      `${asked}: Slurm is installed here but not configured, or its controller cannot be reached (sinfo says: ${result.words})`,
      {
        fix: `configure Slurm on this host (slurm.conf, or SLURM_CONF naming it; sinfo must answer), ${NOT_PLACED_FIX}`,
      },
    );
  }
  return new CatherdError("E_ENGINE_REFUSED", `${asked}: sinfo says: ${result.words}`, {
    fix: `see what Slurm said above (the call was: ${result.command}), ${NOT_PLACED_FIX}`,
  });
}
