#!/usr/bin/env node
// @ts-check
// catherd's benchmark (specs/performance.md): measurement, not optimisation. `npm run bench` builds, then
// runs this.
//
// Each measurement runs several times after a warm-up and is compared with a baseline measured in the same
// run (interleaved with it where that is cheap, so background load hits both alike). Prints a table
// (median, p95, ratio to the baseline), writes bench/results.json (raw samples, machine, configuration,
// and a markdown table for specs/performance.md) and prints that markdown table last.
//
// Environment:
//   BENCH_QUICK=1          fewer repetitions, 10 s steady windows
//   BENCH_STEADY_SECS=n    the steady memory/CPU window (default 60, quick 10)
//   BENCH_STEADY_WARM=n    seconds between dispatch and that window (default 20, quick 2): past start-up
//   BENCH_INGEST_MB=n      size of the ingestion files (default 100)
//   BENCH_CHATTY_HZ=n      ticks per second of the chatty agent (2 lines a tick; default 100)
//   BENCH_SCALE=1,10,50,100  concurrency levels
//   BENCH_ONLY=a,b         sections: dispatch, imports, reaction, stop, ingest, steady, read, admission, scale
//   BENCH_TMP=dir          where the temporary homes go (default: the OS temp dir)
//   BENCH_KEEP=1           keep the temporary folders
//   BENCH_SOURCE=text      where the measured tree came from, when it is a copy (recorded in results.json)
//
// Layout: bench/lib/ holds what the sections share (config, /proc, clocks, timed spawns, the reaper, the
// report, catherd as a user runs it); bench/sections/ holds one file per section, each an
// `async (ctx) => void` that adds its rows to ctx.report and starts every node process on ctx.node.
//
// Every process it starts is reaped, even on failure: supervisors by pid (checked against their start
// time), agents by the CATHERD_DISPATCH=<id> of their environment (/proc/*/environ). Never by name.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as config from "./lib/config.mjs";
import { Scratch } from "./lib/context.mjs";
import { Reaper } from "./lib/reaper.mjs";
import { Report } from "./lib/report.mjs";
import { readJson } from "./lib/wait.mjs";
import { benchAdmission } from "./sections/admission.mjs";
import { benchDispatch } from "./sections/dispatch.mjs";
import { benchImports } from "./sections/imports.mjs";
import { benchIngest } from "./sections/ingest.mjs";
import { benchReaction } from "./sections/reaction.mjs";
import { benchRead } from "./sections/read.mjs";
import { benchScale } from "./sections/scale.mjs";
import { benchSteady } from "./sections/steady.mjs";
import { benchStop } from "./sections/stop.mjs";

/** @typedef {import("./lib/context.mjs").BenchContext} BenchContext */

/** The sections, in the order they run; BENCH_ONLY picks some by name. @type {[string, (ctx: BenchContext) => Promise<void>][]} */
const SECTIONS = [
  ["dispatch", benchDispatch],
  ["imports", benchImports],
  ["reaction", benchReaction],
  ["stop", benchStop],
  ["ingest", benchIngest],
  ["steady", benchSteady],
  ["read", benchRead],
  ["admission", benchAdmission],
  ["scale", benchScale],
];

const { ROOT, CLI, AGENT, QUICK, ONLY, KEEP } = config;
const reaper = new Reaper();
/** @type {string | null} */
let scratchRoot = null;

/** @param {number} code */
function cleanupAndExit(code) {
  reaper.reap();
  if (scratchRoot !== null && !KEEP) fs.rmSync(scratchRoot, { recursive: true, force: true });
  process.exit(code);
}
process.on("SIGINT", () => cleanupAndExit(130));
process.on("SIGTERM", () => cleanupAndExit(143));
process.on("exit", () => reaper.reap());

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

async function main() {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build (npm run bench does)`);
  for (const f of Object.values(AGENT)) fs.chmodSync(f, 0o755);
  const tmpRoot = fs.mkdtempSync(path.join(process.env.BENCH_TMP ?? os.tmpdir(), "catherd-bench-"));
  scratchRoot = tmpRoot;
  const report = new Report();
  /** @type {BenchContext} */
  const ctx = { node: process.execPath, scratch: new Scratch(tmpRoot), reaper, report };
  const started = performance.now();
  const info = machine(tmpRoot);
  const loadStart = os.loadavg();
  const load1 = loadStart[0] ?? 0;
  console.log(
    `catherd bench${QUICK ? " (quick)" : ""}: ${info.nproc} cores, ${info.memTotal}, node ${info.node}, kernel ${info.kernel}; load ${loadStart.map((l) => l.toFixed(2)).join(" ")}`,
  );
  if (load1 > info.nproc)
    console.log(
      `  warning: load average ${load1.toFixed(2)} exceeds ${info.nproc} cores; figures will be noisy`,
    );
  /** @type {Record<string, number>} */
  const timings = {};
  /** @type {unknown} */
  let failure = null;
  for (const [name, section] of SECTIONS) {
    if (ONLY.length > 0 && !ONLY.includes(name)) continue;
    const t = performance.now();
    try {
      await section(ctx);
    } catch (error) {
      failure = error;
      console.error(`\n[${name}] failed: ${error instanceof Error ? error.stack : error}`);
      reaper.reap();
      break;
    }
    timings[name] = (performance.now() - t) / 1000;
  }
  const wallSecs = (performance.now() - started) / 1000;
  const leftover = reaper.reap();
  const markdown = report.markdownTable();
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
    sectionSecs: timings,
    leftoverKilled: leftover,
    failure: failure === null ? null : String(failure),
    rows: report.rows,
    extra: report.extra,
    raw: report.raw,
    markdown,
  };
  fs.writeFileSync(path.join(ROOT, "bench/results.json"), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\n${report.textTable()}\n`);
  console.log(`${markdown}\n`);
  console.log(
    `bench wall time ${wallSecs.toFixed(1)} s (${Object.entries(timings)
      .map(([k, v]) => `${k} ${v.toFixed(1)} s`)
      .join(", ")}); load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; results in bench/results.json`,
  );
  if (!KEEP) fs.rmSync(tmpRoot, { recursive: true, force: true });
  else console.log(`kept ${tmpRoot}`);
  process.exitCode = failure === null ? 0 : 1;
}

main().catch((error) => {
  console.error(error);
  reaper.reap();
  process.exitCode = 1;
});
