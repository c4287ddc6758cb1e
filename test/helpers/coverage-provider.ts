import v8 from "@vitest/coverage-v8";
import type { CoverageProviderModule } from "vitest/node";
import { CHILD_COVERAGE_DIR, type CoverageMapLike, foldChildCoverage } from "./child-coverage.js";

// vitest's v8 coverage provider, extended to the processes the tests spawn (test/helpers/child-coverage.ts
// says how). Selected in vitest.config.ts as a custom provider; everything else is the v8 provider's.

const provider: CoverageProviderModule = {
  startCoverage(options) {
    // In each test worker, before its tests run: every node process it starts from now on (the CLI, the
    // supervisors, their agents) writes its coverage on exit. The worker itself is already running and
    // keeps collecting through the inspector, as the v8 provider does.
    process.env.NODE_V8_COVERAGE = CHILD_COVERAGE_DIR;
    return v8.startCoverage?.(options);
  },
  takeCoverage(options) {
    return v8.takeCoverage?.(options);
  },
  stopCoverage(options) {
    return v8.stopCoverage?.(options);
  },
  async getProvider() {
    const base = await v8.getProvider();
    // The v8 provider's own filter (coverage.include and exclude), which its CoverageProvider type hides.
    const included = base as unknown as { isIncluded(file: string): boolean };
    const initialize = base.initialize.bind(base);
    base.initialize = async (ctx) => {
      await initialize(ctx);
      // The v8 provider writes its own name into the options the workers receive, and a worker would then
      // load the v8 module instead of this one: name this one back, so that startCoverage above runs.
      (base.resolveOptions() as { provider: string }).provider = "custom";
    };
    const generate = base.generateCoverage.bind(base);
    base.generateCoverage = async (context) => {
      const map = (await generate(context)) as CoverageMapLike;
      const t0 = performance.now();
      const folded = await foldChildCoverage(map, (file) => included.isIncluded(file));
      console.log(
        `coverage of spawned processes: ${folded.processes} processes, ${folded.scripts} scripts, ${folded.files} files (${folded.unmatched} items unmatched), folded in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
      return map;
    };
    return base;
  },
};

export default provider;
