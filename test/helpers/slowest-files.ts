import type { Reporter, TestModule } from "vitest/node";

// A reporter that closes every run with its ten slowest test files: where the suite's time goes, so that
// a file that grew slow is seen the day it did (specs/testing.md, "How long the gate takes").

const SHOWN = 10;

export default class SlowestFiles implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const timed = testModules
      .map((m) => ({ file: m.relativeModuleId, project: m.project.name, ms: m.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SHOWN);
    if (timed.length < 2) return;
    const lines = timed.map(
      ({ file, project, ms }) =>
        `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}${project === "" ? "" : ` (${project})`}`,
    );
    console.log(`\nThe ${timed.length} slowest test files:\n${lines.join("\n")}\n`);
  }
}
