// The one function of @bcoe/v8-coverage (no types of its own) that child-coverage.ts uses.
declare module "@bcoe/v8-coverage" {
  import type { Profiler } from "node:inspector";

  /** What NODE_V8_COVERAGE writes for one process (its `result`). */
  export interface ProcessCov {
    result: Profiler.ScriptCoverage[];
  }

  /** Sums the block coverage of several processes, script by script (by url). */
  export function mergeProcessCovs(processCovs: readonly ProcessCov[]): ProcessCov;
}
