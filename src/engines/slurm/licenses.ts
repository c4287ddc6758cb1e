import { engineError, runSlurm, type SlurmCallOptions } from "./command.js";
import { parseLicenses, type SlurmLicense } from "./output.js";

// The licenses a cluster defines (`scontrol show lic -o`): a per-backend cap becomes `-L <backend>:1`
// only where the cluster defines a license of that name (specs/placement.md, "Caps as licenses").

/** The cluster's licenses by name. Throws E_ENGINE_MISSING, E_ENGINE_TIMEOUT or E_ENGINE_REFUSED. */
export async function clusterLicenses(options: SlurmCallOptions = {}): Promise<Record<string, SlurmLicense>> {
  const result = await runSlurm("scontrol", ["show", "licenses", "-o"], options);
  if (!result.ok) throw engineError(result, "read the cluster's licenses");
  return parseLicenses(result.stdout);
}

/** Whether the cluster defines a license of this name. */
export async function definesLicense(name: string, options: SlurmCallOptions = {}): Promise<boolean> {
  return Object.hasOwn(await clusterLicenses(options), name);
}
