import { staleBuild } from "../../scripts/source-digest.mjs";
import { ROOT } from "./folders.js";

/**
 * Before any test: most of them spawn the programs in dist/, so a build that does not hold the current
 * sources fails the run at once instead of testing older code (scripts/source-digest.mjs).
 */
export default function assertFreshBuild(): void {
  const stale = staleBuild(ROOT);
  if (stale !== null) throw new Error(`${stale}: run \`npm run build\` (npm test builds first)`);
}
