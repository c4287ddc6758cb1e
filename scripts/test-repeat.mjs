#!/usr/bin/env node
// @ts-check
// Hunts flakes: runs the given test files N times in a row (`--parallel K`: K runs at once, to add load)
// and prints, per file, how many runs passed and each failure with its first error line.
//
//   npm run test:repeat -- test/dispatch/isolation.test.ts [more files…] [--times 20] [--parallel 1]
//                          [--config vitest.config.ts] [-t <test name pattern>]
//
// `-t` runs only the tests whose names match (vitest's own `-t`): one case of a heavy file, repeated.
// Each run is one `vitest run <files>` with the JSON reporter; exits 1 when any run failed. The build must
// be fresh, as for any vitest run (`npm run build`).
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stripVTControlCharacters } from "node:util";

const USAGE =
  "usage: npm run test:repeat -- <test files…> [--times N] [--parallel K] [--config <vitest config>] [-t <pattern>]";

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {{ files: string[]; times: number; parallel: number; config: string | null; testName: string | null }} */
  const options = { files: [], times: 20, parallel: 1, config: null, testName: null };
  for (let i = 0; i < argv.length; i++) {
    const arg = /** @type {string} */ (argv[i]);
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value\n${USAGE}`);
      return next;
    };
    if (arg === "--times") options.times = count(arg, value());
    else if (arg === "--parallel") options.parallel = count(arg, value());
    else if (arg === "--config") options.config = value();
    else if (arg === "-t") options.testName = value();
    else if (arg.startsWith("-")) throw new Error(`unknown option ${arg}\n${USAGE}`);
    else options.files.push(arg);
  }
  if (options.files.length === 0) throw new Error(`no test file given\n${USAGE}`);
  for (const file of options.files) {
    if (!fs.existsSync(file)) throw new Error(`${file} does not exist`);
  }
  return options;
}

/** @param {string} name @param {string} text */
function count(name, text) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new Error(`${name} takes a whole number from 1 to 1000`);
  return n;
}

/**
 * @typedef {{ file: string; passed: boolean; failures: string[] }} FileOutcome
 * @typedef {{ run: number; ms: number; files: FileOutcome[]; crashed: string | null }} RunOutcome
 */

/**
 * One vitest run of the files; its JSON report read back.
 * @param {number} run @param {ReturnType<typeof parseArgs>} options @returns {Promise<RunOutcome>}
 */
function runOnce(run, options) {
  const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "catherd-repeat-")), "report.json");
  const args = ["vitest", "run", ...options.files, "--reporter=json", `--outputFile=${report}`];
  if (options.config !== null) args.push("--config", options.config);
  if (options.testName !== null) args.push("-t", options.testName);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn("npx", args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    child.on("close", () => {
      const ms = Date.now() - started;
      let files = /** @type {FileOutcome[]} */ ([]);
      try {
        files = outcomesOf(JSON.parse(fs.readFileSync(report, "utf8")));
      } catch {
        // no report: said below
      }
      // A run that reports no file (a stale build, a config error) says why in its stderr.
      const crashed = files.length > 0 ? null : errorLine(stderr) || "vitest wrote no report";
      fs.rmSync(path.dirname(report), { recursive: true, force: true });
      resolve({ run, ms, files, crashed });
    });
  });
}

/**
 * @param {{ testResults: { name: string; status: string; message?: string;
 *   assertionResults: { fullName: string; status: string; failureMessages: string[] }[] }[] }} json
 * @returns {FileOutcome[]}
 */
function outcomesOf(json) {
  return json.testResults.map((result) => {
    const failures = result.assertionResults
      .filter((a) => a.status === "failed")
      .map((a) => `${a.fullName}: ${firstLine(a.failureMessages[0] ?? "")}`);
    // A hook's failure (the outliving-process check after a file) is the file's message.
    if (result.status === "failed" && failures.length === 0) {
      failures.push(`(the file): ${firstLine(result.message ?? "failed")}`);
    }
    return { file: path.relative(process.cwd(), result.name), passed: result.status === "passed", failures };
  });
}

/** The first line of `text` that says an error, else its first line. @param {string} text */
function errorLine(text) {
  const lines = text.split("\n").map(firstLine).filter(Boolean);
  return lines.find((l) => /Error: /.test(l)) ?? lines.find((l) => /error/i.test(l)) ?? lines[0] ?? "";
}

/** The first line of `text` that is not blank, without the colours vitest puts in its messages. @param {string} text */
function firstLine(text) {
  return (
    stripVTControlCharacters(text)
      .split("\n")
      .find((l) => l.trim() !== "") ?? ""
  ).trim();
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  /** @type {RunOutcome[]} */
  const outcomes = [];
  let next = 1;
  const worker = async () => {
    while (next <= options.times) {
      const run = next++;
      const outcome = await runOnce(run, options);
      outcomes.push(outcome);
      const failed = outcome.files.filter((f) => !f.passed).length;
      const said = outcome.crashed ?? (failed === 0 ? "green" : `${failed} file(s) failed`);
      console.log(`run ${run}/${options.times}: ${said} (${(outcome.ms / 1000).toFixed(1)} s)`);
    }
  };
  await Promise.all(Array.from({ length: options.parallel }, worker));
  outcomes.sort((a, b) => a.run - b.run);
  console.log("");
  let anyFailed = false;
  for (const file of options.files) {
    const rel = path.relative(process.cwd(), path.resolve(file));
    const runs = outcomes.map((o) => ({ run: o.run, file: o.files.find((f) => f.file === rel) }));
    const green = runs.filter((r) => r.file?.passed === true).length;
    console.log(`${rel}: ${green}/${options.times} runs green`);
    for (const { run, file: outcome } of runs) {
      if (outcome === undefined) {
        anyFailed = true;
        console.log(`  run ${run}: no result (${outcomes.find((o) => o.run === run)?.crashed ?? "not run"})`);
        continue;
      }
      for (const failure of outcome.failures) {
        anyFailed = true;
        console.log(`  run ${run}: ${failure}`);
      }
    }
  }
  const seconds = outcomes.map((o) => o.ms / 1000);
  console.log(
    `\n${options.times} runs, ${Math.min(...seconds).toFixed(1)}–${Math.max(...seconds).toFixed(1)} s each`,
  );
  process.exitCode = anyFailed ? 1 : 0;
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 2;
});
