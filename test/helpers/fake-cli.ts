import * as fs from "node:fs";
import * as path from "node:path";
import { ROOT } from "./folders.js";

// Fake agent CLIs that print what the real ones printed (test/fixtures/recorded), one scripted run per
// invocation, found by catherd through CATHERD_<B>_BIN or --bin like the real ones.

const RECORDED = path.join(ROOT, "test/fixtures/recorded");

/** The stdout lines of a recorded run of a real CLI. */
export function recordedLines(cli: string, scenario: string): string[] {
  return fs
    .readFileSync(path.join(RECORDED, cli, `${scenario}.jsonl`), "utf8")
    .trim()
    .split("\n");
}

/**
 * One scripted run: its stdout lines, then its exit code; `holdAt` pauses after that many lines until a file
 * exists; `write` writes a file (relative to the folder it runs in) before the lines, as an agent's edit.
 */
export interface FakeRun {
  lines: string[];
  exit: number;
  holdAt?: { line: number; until: string };
  write?: { file: string; text: string };
}

/**
 * A fake CLI that plays one scripted run per invocation, in order (the last one again once they run out).
 * `{RESET+6}` in a line becomes the time six seconds from now, as a provider names when its limit resets
 * (time enough for the attempt to be recorded before it, even on a loaded machine). Answers `--version` as
 * readiness asks it. Each run appends its argv to `<dir>/<name>.calls`.
 */
export function fakeCli(dir: string, name: string, runs: FakeRun[]): string {
  const script = path.join(dir, name);
  const runsFile = path.join(dir, `${name}.runs.json`);
  const countFile = path.join(dir, `${name}.count`);
  const callsFile = path.join(dir, `${name}.calls`);
  fs.writeFileSync(runsFile, JSON.stringify(runs));
  fs.writeFileSync(
    `${script}.cjs`,
    `#!${process.execPath}
const fs = require("node:fs");
if (process.argv[2] === "--version") { console.log("fake-cli 99.0.0"); process.exit(0); }
const runs = JSON.parse(fs.readFileSync(${JSON.stringify(runsFile)}, "utf8"));
let n = 0;
try { n = Number(fs.readFileSync(${JSON.stringify(countFile)}, "utf8")); } catch {}
fs.writeFileSync(${JSON.stringify(countFile)}, String(n + 1));
fs.appendFileSync(${JSON.stringify(callsFile)}, JSON.stringify(process.argv.slice(2)) + "\\n");
const run = runs[Math.min(n, runs.length - 1)];
if (run.write) fs.writeFileSync(run.write.file, run.write.text);
const reset = new Date(Math.ceil(Date.now() / 1000) * 1000 + 6000).toISOString().replace(".000Z", "Z");
const print = (lines) => { for (const line of lines) fs.writeSync(1, line.replace("{RESET+6}", reset) + "\\n"); };
const hold = run.holdAt ?? { line: run.lines.length, until: null };
print(run.lines.slice(0, hold.line));
const finish = () => { print(run.lines.slice(hold.line)); process.exit(run.exit); };
if (hold.until === null) finish();
else { const look = () => (fs.existsSync(hold.until) ? finish() : setTimeout(look, 50)); look(); }
`,
    { mode: 0o755 },
  );
  fs.symlinkSync(`${script}.cjs`, script);
  return script;
}

/** The argv of each run of a fake CLI so far. */
export function calls(dir: string, name: string): string[][] {
  const file = path.join(dir, `${name}.calls`);
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as string[]);
}
