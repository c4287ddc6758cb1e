#!/usr/bin/env node
// @ts-check
// catherd's benchmark (specs/performance.md): measurement, not optimisation. `npm run bench` builds, then
// runs this.
//
// Each measurement runs several times after a warm-up and is compared with a baseline measured in the same
// run (interleaved with it where that is cheap, so background load hits both alike). Every row is measured
// on the machine's node and on Node 24 side by side (bench/lib/columns.mjs): each section runs in a child
// process on each runtime in turn. Prints a table per runtime as it goes and one table with both at the end
// (median, ratio to the baseline, target met), writes bench/results.json (raw samples, machines,
// configuration, and the markdown table: the latest full run's figures for specs/performance.md, the run
// itself for bench/HISTORY.md).
//
// Environment:
//   BENCH_NODE=a,b         the other runtimes to measure (paths of node binaries); `none`: only the bench's
//                          own. Default: Node 24 (scripts/node/install-node.sh 24) unless this already is 24
//   BENCH_QUICK=1          fewer repetitions, 10 s steady windows
//   BENCH_STEADY_SECS=n    the steady memory/CPU window (default 60, quick 10)
//   BENCH_STEADY_WARM=n    seconds between dispatch and that window (default 20, quick 2): past start-up
//   BENCH_INGEST_MB=n      size of the ingestion files (default 100)
//   BENCH_CHATTY_HZ=n      ticks per second of the chatty agent (2 lines a tick; default 100)
//   BENCH_SCALE=1,10,50,100  concurrency levels
//   BENCH_RUNBUDGET_LIVE=1,10,50  live dispatches of the run-budget section's run
//   BENCH_ONLY=a,b         sections: dispatch, mcp, imports, reaction, stop, ingest, steady, read, admission,
//                          lockhold, scale, ui, lock, runbudget, sandbox
//   BENCH_TMP=dir          where the temporary homes go (default: the OS temp dir)
//   BENCH_KEEP=1           keep the temporary folders
//   BENCH_SOURCE=text      where the measured tree came from, when it is a copy (recorded in results.json)
//
// Layout: bench/lib/ holds what the sections share (config, /proc, clocks, timed spawns, the reaper, the
// report, the columns, catherd as a user runs it); bench/sections/ holds one file per section, each an
// `async (ctx) => void` that adds its rows to ctx.report and starts every node process on ctx.node.
//
// Every process it starts is reaped, even on failure: supervisors by pid (checked against their start
// time), agents by the CATHERD_DISPATCH=<id> of their environment (/proc/*/environ). Never by name.
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { nodesToMeasure, sideBySideMarkdown, sideBySideText, versionOf } from "./lib/columns.mjs";
import * as config from "./lib/config.mjs";
import { Scratch } from "./lib/context.mjs";
import { Reaper } from "./lib/reaper.mjs";
import { Report } from "./lib/report.mjs";
import { readJson } from "./lib/wait.mjs";
import { benchAdmission } from "./sections/admission.mjs";
import { benchDispatch } from "./sections/dispatch.mjs";
import { benchImports } from "./sections/imports.mjs";
import { benchIngest } from "./sections/ingest.mjs";
import { benchLock } from "./sections/lock.mjs";
import { benchLockHold } from "./sections/lock-hold.mjs";
import { benchMcp } from "./sections/mcp.mjs";
import { benchReaction } from "./sections/reaction.mjs";
import { benchRead } from "./sections/read.mjs";
import { benchRunBudget } from "./sections/run-budget.mjs";
import { benchSandbox } from "./sections/sandbox.mjs";
import { benchScale } from "./sections/scale.mjs";
import { benchSteady } from "./sections/steady.mjs";
import { benchStop } from "./sections/stop.mjs";
import { benchUi } from "./sections/ui.mjs";

/** @typedef {import("./lib/context.mjs").BenchContext} BenchContext */

/** The sections, in the order they run; BENCH_ONLY picks some by name. @type {[string, (ctx: BenchContext) => Promise<void>][]} */
const SECTIONS = [
  ["dispatch", benchDispatch],
  ["mcp", benchMcp],
  ["imports", benchImports],
  ["reaction", benchReaction],
  ["stop", benchStop],
  ["ingest", benchIngest],
  ["steady", benchSteady],
  ["read", benchRead],
  ["admission", benchAdmission],
  ["lockhold", benchLockHold],
  ["scale", benchScale],
  ["ui", benchUi],
  ["sandbox", benchSandbox],
  ["lock", benchLock],
  ["runbudget", benchRunBudget],
];

const { ROOT, CLI, AGENT, QUICK, ONLY, KEEP } = config;

/** What one section on one runtime hands back (written by the child to the file it was given). */
/** @typedef {{ version: string, rows: import("./lib/report.mjs").Row[], raw: Record<string, number[]>, extra: Record<string, any>, failure: string | null, secs: number }} SectionResult */

/**
 * The machine and the tree measured, for results.json.
 * @param {string} tmpRoot
 */
function machine(tmpRoot) {
  /** @param {string} cmd @param {string[]} args */
  const sh = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    } catch {
      return null;
    }
  };
  return {
    nproc: Number(sh("nproc", [])),
    memTotal: /MemTotal:\s+(\d+ kB)/.exec(fs.readFileSync("/proc/meminfo", "utf8"))?.[1] ?? null,
    cpu: /model name\s*:\s*(.+)/.exec(fs.readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? null,
    node: process.version,
    kernel: sh("uname", ["-r"]),
    os: sh("uname", ["-sm"]),
    clkTck: config.CLK_TCK,
    filesystem: sh("df", ["--output=fstype", tmpRoot])?.split("\n")[1]?.trim() ?? null,
    deps: Object.fromEntries(
      ["zod", "proper-lockfile", "ps-list"].map((d) => [
        d,
        readJson(path.join(ROOT, "node_modules", d, "package.json"))?.version ?? null,
      ]),
    ),
    root: ROOT,
    /** Where the measured tree came from, when ROOT is a copy (e.g. "commit c1ba1f8 + working tree"). */
    source: process.env.BENCH_SOURCE ?? null,
    commit: sh("git", ["-C", ROOT, "rev-parse", "--short", "HEAD"]),
    dirtyFiles: sh("git", ["-C", ROOT, "status", "--porcelain"])?.split("\n").filter(Boolean).length ?? null,
  };
}

/**
 * The child: one section on this process's node, its rows written to `outFile`. Reaps what it started.
 * @param {string} name
 * @param {string} scratchRoot  the column's scratch folder (shared by its sections)
 * @param {string} outFile
 */
async function runSection(name, scratchRoot, outFile) {
  const section = SECTIONS.find(([n]) => n === name)?.[1];
  if (section === undefined) throw new Error(`no section ${name}`);
  const reaper = new Reaper();
  process.on("SIGTERM", () => {
    reaper.reap();
    process.exit(143);
  });
  process.on("exit", () => reaper.reap());
  const report = new Report();
  /** @type {BenchContext} */
  const ctx = {
    node: process.execPath,
    nodeMajor: Number(process.versions.node.split(".")[0]),
    scratch: new Scratch(scratchRoot),
    reaper,
    report,
  };
  const t = performance.now();
  /** @type {string | null} */
  let failure = null;
  try {
    await section(ctx);
  } catch (error) {
    failure = error instanceof Error ? (error.stack ?? error.message) : String(error);
    console.error(`\n[${name}] failed: ${failure}`);
  }
  reaper.reap();
  /** @type {SectionResult} */
  const result = {
    version: process.version,
    rows: report.rows,
    raw: report.raw,
    extra: report.extra,
    failure,
    secs: (performance.now() - t) / 1000,
  };
  fs.writeFileSync(outFile, JSON.stringify(result));
}

/** The running section child, stopped if the bench is interrupted. @type {import("node:child_process").ChildProcess | null} */
let running = null;
/** @type {string | null} */
let scratchTop = null;

/** @param {number} code */
function cleanupAndExit(code) {
  if (running?.pid !== undefined && running.exitCode === null) running.kill("SIGTERM");
  if (scratchTop !== null && !KEEP) fs.rmSync(scratchTop, { recursive: true, force: true });
  process.exit(code);
}

/**
 * Runs one section on `node` in a child process, its output passed through; its result, or null.
 * @param {string} node
 * @param {string} name
 * @param {string} scratchRoot
 * @returns {Promise<SectionResult | null>}
 */
function sectionOn(node, name, scratchRoot) {
  const outFile = path.join(scratchRoot, `result-${name}.json`);
  return new Promise((resolve) => {
    const child = spawn(node, [fileURLToPath(import.meta.url), "--section", name, scratchRoot, outFile], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    running = child;
    child.on("close", () => {
      running = null;
      resolve(readJson(outFile));
    });
  });
}

async function main() {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build (npm run bench does)`);
  process.on("SIGINT", () => cleanupAndExit(130));
  process.on("SIGTERM", () => cleanupAndExit(143));
  for (const f of Object.values(AGENT)) fs.chmodSync(f, 0o755);
  const tmpRoot = fs.mkdtempSync(path.join(process.env.BENCH_TMP ?? os.tmpdir(), "catherd-bench-"));
  scratchTop = tmpRoot;
  const nodes = nodesToMeasure(process.env.BENCH_NODE);
  const columns = nodes.map((node, i) => ({
    node,
    version: versionOf(node),
    scratch: path.join(tmpRoot, `node-${i}`),
    /** @type {import("./lib/report.mjs").Row[]} */ rows: [],
    /** @type {Record<string, number[]>} */ raw: {},
    /** @type {Record<string, any>} */ extra: {},
    /** @type {Record<string, number>} */ sectionSecs: {},
    /** @type {string[]} */ failures: [],
  }));
  const started = performance.now();
  const info = machine(tmpRoot);
  const loadStart = os.loadavg();
  const load1 = loadStart[0] ?? 0;
  console.log(
    `catherd bench${QUICK ? " (quick)" : ""}: ${info.nproc} cores, ${info.memTotal}, kernel ${info.kernel}; node ${columns.map((c) => c.version).join(" and ")}; load ${loadStart.map((l) => l.toFixed(2)).join(" ")}`,
  );
  if (load1 > info.nproc)
    console.log(
      `  warning: load average ${load1.toFixed(2)} exceeds ${info.nproc} cores; figures will be noisy`,
    );
  for (const [name] of SECTIONS) {
    if (ONLY.length > 0 && !ONLY.includes(name)) continue;
    for (const column of columns) {
      console.log(`\n===== ${name} on node ${column.version}`);
      const result = await sectionOn(column.node, name, column.scratch);
      if (result === null) {
        column.failures.push(`${name}: the section's process wrote no result`);
        continue;
      }
      column.rows.push(...result.rows);
      Object.assign(column.raw, result.raw);
      Object.assign(column.extra, result.extra);
      column.sectionSecs[name] = result.secs;
      if (result.failure !== null) column.failures.push(`${name}: ${result.failure}`);
    }
  }
  const wallSecs = (performance.now() - started) / 1000;
  const markdown = sideBySideMarkdown(columns);
  const results = {
    at: new Date().toISOString(),
    quick: QUICK,
    config: {
      reps: config.REPS,
      steadySecs: config.STEADY_SECS,
      steadyWarmSecs: config.STEADY_WARM_SECS,
      ingestMb: config.INGEST_MB,
      chattyHz: config.CHATTY_HZ,
      scale: config.SCALE,
      pollMs: config.POLL_MS,
      killGraceMs: config.KILL_GRACE_MS,
      only: ONLY,
    },
    machine: { ...info, loadStart, loadEnd: os.loadavg() },
    wallSecs,
    columns: columns.map(({ node, version, rows, raw, extra, sectionSecs, failures }) => ({
      node,
      version,
      sectionSecs,
      failures,
      rows,
      extra,
      raw,
    })),
    markdown,
  };
  fs.writeFileSync(path.join(ROOT, "bench/results.json"), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\n${sideBySideText(columns)}\n`);
  console.log(`${markdown}\n`);
  console.log(
    `bench wall time ${wallSecs.toFixed(1)} s; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; results in bench/results.json`,
  );
  const failures = columns.flatMap((c) => c.failures.map((f) => `node ${c.version}: ${f}`));
  for (const f of failures) console.error(`failed: ${f}`);
  if (!KEEP) fs.rmSync(tmpRoot, { recursive: true, force: true });
  else console.log(`kept ${tmpRoot}`);
  process.exitCode = failures.length === 0 ? 0 : 1;
}

const [mode, ...rest] = process.argv.slice(2);
const run = mode === "--section" ? runSection(rest[0] ?? "", rest[1] ?? "", rest[2] ?? "") : main();
run.catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
