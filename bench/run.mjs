#!/usr/bin/env node
// catherd's benchmark (issue 7): measurement, not optimisation. `npm run bench` builds, then runs this.
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
//
// Every process it starts is reaped, even on failure: supervisors by pid (checked against their start
// time), agents by the CATHERD_DISPATCH=<id> of their environment (/proc/*/environ). Never by name.
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { readProcStat } from "../dist/src/infra/proc-stat.js";
import { generateRecorded } from "./generate.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DIST = path.join(ROOT, "dist");
const CLI = path.join(DIST, "bin/catherd.js");
const NODE = process.execPath;
const AGENTS = path.join(ROOT, "bench/agents");
const MARK_EXIT = path.join(AGENTS, "mark-exit.sh");
const EXIT_LATER = path.join(AGENTS, "exit-later.sh");
const QUIET = path.join(AGENTS, "quiet.sh");
const STUBBORN = path.join(AGENTS, "stubborn.sh");
const CHATTY = path.join(AGENTS, "chatty.mjs");
const RECORDED = path.join(ROOT, "test/fixtures/recorded");

const QUICK = process.env.BENCH_QUICK === "1";
const STEADY_SECS = Number(process.env.BENCH_STEADY_SECS ?? (QUICK ? 10 : 60));
// V8 compiles each code path on first use and its memory reducer runs two full collections ~8 s after
// start-up (~50 ms of CPU): one-time costs, not the steady state the window is about.
const STEADY_WARM_SECS = Number(process.env.BENCH_STEADY_WARM ?? (QUICK ? 2 : 20));
const INGEST_MB = Number(process.env.BENCH_INGEST_MB ?? 100);
const CHATTY_HZ = Number(process.env.BENCH_CHATTY_HZ ?? 100);
const SCALE = (process.env.BENCH_SCALE ?? "1,10,50,100").split(",").map(Number);
const ONLY = (process.env.BENCH_ONLY ?? "").split(",").filter((s) => s !== "");
const KEEP = process.env.BENCH_KEEP === "1";
const REPS = QUICK
  ? { warm: 1, dispatch: 7, imports: 3, reaction: 6, stop: 3, ingest: 2, status: 5, admit: 10, admitCli: 3 }
  : {
      warm: 2,
      dispatch: 15,
      imports: 7,
      reaction: 12,
      stop: 6,
      ingest: 3,
      status: 12,
      admit: 30,
      admitCli: 6,
    };
/** The spec's poll, which `dispatch` always writes (SPEC_DEFAULTS.pollMs). */
const POLL_MS = 250;
/** Kill grace of the stop test (--kill-grace). */
const KILL_GRACE_MS = 1000;
const CLK_TCK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

const want = (section) => ONLY.length === 0 || ONLY.includes(section);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ── clocks ────────────────────────────────────────────────────────────────────────────────────────────
// Agents stamp `date +%s%N` (CLOCK_REALTIME); files carry mtimes on the same clock. The bench reads wall
// time as an anchor taken at a Date.now() edge plus performance.now() since then: sub-millisecond and on
// the realtime clock. Re-anchored before each repetition so that clock slewing cannot accumulate.
let wallAnchor = Date.now();
let perfAnchor = performance.now();
function calibrate() {
  const start = Date.now();
  let now = Date.now();
  while (now === start) now = Date.now();
  perfAnchor = performance.now();
  wallAnchor = now;
}
const wallMs = () => wallAnchor + (performance.now() - perfAnchor);
const markMs = (file) => Number(BigInt(fs.readFileSync(file, "utf8").trim()) / 1000n) / 1000;
const mtimeMs = (file) => Number(fs.statSync(file, { bigint: true }).mtimeNs / 1000n) / 1000;

// ── /proc ─────────────────────────────────────────────────────────────────────────────────────────────
/** /proc/<pid>/stat, parsed by catherd's own parser (src/infra/proc-stat.ts), or null when gone. */
const procStat = readProcStat;
function procMem(pid) {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(text)?.[1] ?? Number.NaN);
    return { rssKb: kb("VmRSS"), hwmKb: kb("VmHWM") };
  } catch {
    return null;
  }
}
/** Proportional set size (MiB): file pages shared with other processes counted by share. */
function procPssMiB(pid) {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}
/** CPU seconds (user + system) a process has used. */
const cpuSecs = (pid) => {
  const st = procStat(pid);
  return st === null ? Number.NaN : (st.utime + st.stime) / CLK_TCK;
};
/** CPU seconds on the CPU by the scheduler's count (ns precision), summed over the process's threads. */
function schedSecs(pid) {
  try {
    let ns = 0;
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    }
    return ns / 1e9;
  } catch {
    return Number.NaN;
  }
}
/** CPU ms of this process's children that have been waited for (cutime + cstime). */
const childCpuMs = () => {
  const st = procStat(process.pid);
  return ((st.cutime + st.cstime) / CLK_TCK) * 1000;
};
const isAlive = (ref) => {
  const st = procStat(ref.pid);
  return st !== null && st.startTime === ref.startTime && st.state !== "Z" && st.state !== "X";
};
const pids = () =>
  fs
    .readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .map(Number);
/** pid → CATHERD_DISPATCH of every process that carries one (other than this one). */
function dispatchVariables() {
  const found = new Map();
  for (const pid of pids()) {
    if (pid === process.pid) continue;
    let env;
    try {
      env = fs.readFileSync(`/proc/${pid}/environ`, "latin1");
    } catch {
      continue;
    }
    for (const entry of env.split("\0")) {
      if (entry.startsWith("CATHERD_DISPATCH=")) found.set(pid, entry.slice("CATHERD_DISPATCH=".length));
    }
  }
  return found;
}

// ── what we started, reaped on every path ─────────────────────────────────────────────────────────────
/** Processes we own, by pid + start time. */
const owned = new Map();
/** Every CATHERD_DISPATCH value our agents carry. */
const ourDispatchIds = new Set();
function own(pid) {
  const st = procStat(pid);
  if (st !== null) owned.set(pid, st.startTime);
}
function reap(ids = ourDispatchIds) {
  let killed = 0;
  for (const [pid, startTime] of owned) {
    if (isAlive({ pid, startTime })) {
      try {
        process.kill(pid, "SIGKILL");
        killed += 1;
      } catch {}
    }
    if (!isAlive({ pid, startTime })) owned.delete(pid);
  }
  for (const [pid, id] of dispatchVariables()) {
    if (!ids.has(id)) continue;
    try {
      process.kill(pid, "SIGKILL");
      killed += 1;
    } catch {}
  }
  return killed;
}
let tmpRoot = null;
function cleanupAndExit(code) {
  reap();
  if (tmpRoot !== null && !KEEP) fs.rmSync(tmpRoot, { recursive: true, force: true });
  process.exit(code);
}
process.on("SIGINT", () => cleanupAndExit(130));
process.on("SIGTERM", () => cleanupAndExit(143));
process.on("exit", () => reap());

// ── processes ─────────────────────────────────────────────────────────────────────────────────────────
const baseEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith("CATHERD_") && k !== "NODE_OPTIONS"),
);

/** Spawns and waits; `ms` is from just before spawn() to the exit event. cpuMs is valid when run alone. */
function run(cmd, args, { env = baseEnv, cwd = ROOT, stdin = "ignore" } = {}) {
  return new Promise((resolve) => {
    const cpu0 = childCpuMs();
    calibrate();
    const t0w = wallMs();
    const t0 = performance.now();
    let exitMs = null;
    let out = "";
    let err = "";
    const child = spawn(cmd, args, { env, cwd, stdio: [stdin, "pipe", "pipe"] });
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("error", (error) => resolve({ code: -1, ms: Number.NaN, out, err: String(error), t0w }));
    child.on("exit", () => {
      exitMs = performance.now() - t0;
    });
    child.on("close", (code, signal) => {
      resolve({
        code,
        signal,
        ms: exitMs ?? performance.now() - t0,
        cpuMs: childCpuMs() - cpu0,
        out,
        err,
        t0w,
      });
    });
  });
}

async function waitFor(check, timeoutMs, everyMs = 5) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (performance.now() > deadline) return null;
    await sleep(everyMs);
  }
}
const exists = (file) => fs.existsSync(file);
const readJson = (file) => {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return null;
  }
};

let homeCount = 0;
function makeHome(label) {
  const home = path.join(tmpRoot, `home-${++homeCount}-${label}`);
  fs.mkdirSync(home, { recursive: true });
  return home;
}
let workDir = null; // --cwd of every dispatch: a folder outside any git work tree

/** `catherd dispatch` as a user runs it; returns its timing and its {dispatched}. */
async function dispatch(home, { name, backend = "exec", argv = [], flags = [], bin, brief, env = [] }) {
  const args = [CLI, "dispatch", "--backend", backend, "--json", "--cwd", workDir, "--name", name, ...flags];
  if (bin !== undefined) args.push("--bin", bin);
  if (brief !== undefined) args.push("--brief", brief);
  for (const pair of env) args.push("--env", pair);
  if (backend === "exec") args.push("--", ...argv);
  const result = await run(NODE, args, { env: { ...baseEnv, CATHERD_HOME: home }, cwd: workDir });
  let info = null;
  try {
    info = JSON.parse(result.out).dispatched ?? null;
  } catch {}
  if (info !== null) {
    ourDispatchIds.add(info.dispatchId);
    own(info.supervisorPid);
  }
  return { ...result, info };
}

/** A dispatch that failed is noted (extra.dispatchFailures) and its repetition skipped, not the whole run. */
function failed(section, r) {
  if (r.info !== null && r.code === 0) return false;
  const message = `${r.err}${r.out}`.trim().split("\n").slice(0, 2).join(" / ");
  extra.dispatchFailures ??= [];
  extra.dispatchFailures.push({ section, code: r.code, message });
  console.log(`  ! ${section}: dispatch failed (exit ${r.code}): ${message}`);
  return true;
}

/** Cancels what is still running, waits for every record, then reaps whatever is left. */
async function finish(infos, timeoutMs = 30_000) {
  for (const info of infos) {
    if (info === null) continue;
    if (!exists(path.join(info.dir, "exit.json"))) {
      try {
        fs.writeFileSync(path.join(info.dir, "cancel"), `${new Date().toISOString()}\n`, { flag: "wx" });
      } catch {}
    }
  }
  const records = [];
  const deadline = performance.now() + timeoutMs;
  for (const info of infos) {
    if (info === null) {
      records.push(null);
      continue;
    }
    const file = path.join(info.dir, "record.json");
    await waitFor(() => exists(file), Math.max(0, deadline - performance.now()), 20);
    records.push(readJson(file));
  }
  reap(new Set(infos.filter((i) => i !== null).map((i) => i.dispatchId)));
  return records;
}

// ── statistics and the table ──────────────────────────────────────────────────────────────────────────
function stats(values) {
  const s = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (s.length === 0) return { n: 0, median: Number.NaN, p95: Number.NaN, min: Number.NaN, max: Number.NaN };
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  const p95 = s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)];
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { n: s.length, median, p95, min: s[0], max: s[s.length - 1], mean };
}

const rows = [];
const raw = {};
/**
 * One line of the table. `target`: {text, ok(stats, ratio) → boolean}; `baseline`: {name, value} measured
 * in this run. Lower is better unless `higherIsBetter`.
 */
function addRow({ key, what, unit, samples, baseline = null, target = null, note = "", decimals = 0 }) {
  const s = stats(samples);
  raw[key] = samples;
  const ratio = baseline !== null && Number.isFinite(baseline.value) ? s.median / baseline.value : null;
  const met = target === null ? null : s.n > 0 && target.ok(s, ratio);
  const row = { key, what, unit, ...s, decimals, baseline, ratio, target: target?.text ?? null, met, note };
  rows.push(row);
  console.log(`  ${formatRowText(row)}`);
  return row;
}
const fmt = (v, d = 0) => (Number.isFinite(v) ? v.toFixed(d) : "–");
function formatRowText(r) {
  const base = r.baseline === null ? "" : ` | ${r.baseline.name} ${fmt(r.baseline.value, r.decimals)}`;
  const ratio = r.ratio === null ? "" : ` | ×${fmt(r.ratio, 2)}`;
  const met = r.met === null ? "" : r.met ? " | met" : " | MISSED";
  return `${r.what}: median ${fmt(r.median, r.decimals)} ${r.unit}, p95 ${fmt(r.p95, r.decimals)} (n=${r.n})${base}${ratio}${r.target ? ` | target ${r.target}` : ""}${met}`;
}
function textTable() {
  const head = ["what", "median", "p95", "n", "baseline (median)", "ratio", "target", "met"];
  const body = rows.map((r) => [
    r.what,
    `${fmt(r.median, r.decimals)} ${r.unit}`,
    `${fmt(r.p95, r.decimals)} ${r.unit}`,
    String(r.n),
    r.baseline === null ? "" : `${r.baseline.name}: ${fmt(r.baseline.value, r.decimals)}`,
    r.ratio === null ? "" : `×${fmt(r.ratio, 2)}`,
    r.target ?? "",
    r.met === null ? "" : r.met ? "met" : "MISSED",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join("  ");
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}
function markdownTable() {
  const esc = (s) => String(s).replaceAll("|", "\\|");
  const out = [
    "| what | median | p95 | n | baseline (median, same run) | ratio | target | met | note |",
    "|---|---:|---:|---:|---|---:|---|---|---|",
  ];
  for (const r of rows) {
    out.push(
      `| ${esc(r.what)} | ${fmt(r.median, r.decimals)} ${r.unit} | ${fmt(r.p95, r.decimals)} ${r.unit} | ${r.n} | ${esc(
        r.baseline === null
          ? ""
          : `${r.baseline.name}: ${fmt(r.baseline.value, r.decimals)} ${r.baseline.unit ?? r.unit}`,
      )} | ${r.ratio === null ? "" : `×${fmt(r.ratio, 2)}`} | ${esc(r.target ?? "")} | ${r.met === null ? "" : r.met ? "met" : "**missed**"} | ${esc(r.note)} |`,
    );
  }
  return out.join("\n");
}

const extra = {};
const baselines = {};

// ── sections ──────────────────────────────────────────────────────────────────────────────────────────

/** Dispatch latency and time to agent, interleaved with `node -e ''` and a direct spawn of the agent. */
async function benchDispatch() {
  console.log("\n[dispatch] latency and time to agent (exec backend, shell-script agent)");
  const home = makeHome("dispatch");
  const marks = path.join(tmpRoot, "marks-dispatch");
  fs.mkdirSync(marks);
  const node = [];
  const nodeCpu = [];
  const direct = [];
  const directAgent = [];
  const latency = [];
  const latencyCpu = [];
  const toAgent = [];
  const toRecord = [];
  const infos = [];
  for (let i = -REPS.warm; i < REPS.dispatch; i++) {
    const keep = i >= 0;
    const n = await run(NODE, ["-e", ""]);
    const dmark = path.join(marks, `direct-${i}`);
    const d = await run(MARK_EXIT, [dmark]);
    const mark = path.join(marks, `dispatch-${i}`);
    const r = await dispatch(home, {
      name: `lat-${i + REPS.warm}`,
      argv: [MARK_EXIT, mark],
      flags: ["--idle", "1m", "--wall", "1m"],
    });
    if (failed("dispatch", r)) continue;
    infos.push(r.info);
    const seen = await waitFor(() => exists(mark) && fs.statSync(mark).size > 0, 10_000);
    const recorded = await waitFor(() => exists(path.join(r.info.dir, "record.json")), 10_000);
    if (!keep) continue;
    node.push(n.ms);
    nodeCpu.push(n.cpuMs);
    direct.push(d.ms);
    directAgent.push(markMs(dmark) - d.t0w);
    latency.push(r.ms);
    latencyCpu.push(r.cpuMs);
    if (seen) toAgent.push(markMs(mark) - r.t0w);
    if (recorded) toRecord.push(mtimeMs(path.join(r.info.dir, "record.json")) - r.t0w);
  }
  await finish(infos);
  const nodeStart = stats(node).median;
  baselines.nodeStart = nodeStart;
  addRow({ key: "baseline.node", what: "baseline: `node -e ''` start to exit", unit: "ms", samples: node });
  addRow({
    key: "baseline.directAgent",
    what: "baseline: spawn the agent directly, to its exit",
    unit: "ms",
    samples: direct,
    decimals: 1,
  });
  addRow({
    key: "dispatch.latency",
    what: "dispatch latency (`catherd dispatch` until it returns)",
    unit: "ms",
    samples: latency,
    baseline: { name: "node -e ''", value: nodeStart },
    target: { text: "≤ 2.5× bare node start", ok: (_s, ratio) => ratio <= 2.5 },
    note: `direct spawn of the agent: median ${fmt(stats(direct).median, 1)} ms`,
  });
  addRow({
    key: "dispatch.cpu",
    what: "dispatch CPU (user+sys of the dispatch process)",
    unit: "ms",
    samples: latencyCpu,
    baseline: { name: "node -e '' CPU", value: stats(nodeCpu).median },
  });
  addRow({
    key: "baseline.directAgent.first",
    what: "baseline: time to agent, direct spawn",
    unit: "ms",
    samples: directAgent,
    decimals: 1,
  });
  addRow({
    key: "dispatch.timeToAgent",
    what: "time to agent (dispatch invoked → agent's first instruction)",
    unit: "ms",
    samples: toAgent,
    baseline: { name: "node -e ''", value: nodeStart },
    target: { text: "≤ 3× bare node start", ok: (_s, ratio) => ratio <= 3 },
    note: `direct spawn: median ${fmt(stats(directAgent).median, 1)} ms`,
  });
  addRow({
    key: "dispatch.timeToRecord",
    what: "dispatch invoked → record.json (agent exits at once)",
    unit: "ms",
    samples: toRecord,
  });
}

/** Cold import cost of each module, in a fresh node each time: time, RSS and peak after the import. */
async function benchImports() {
  console.log("\n[imports] cold import of one module in a fresh node (ms inside the process; RSS after)");
  const probe = [
    "import * as fs from 'node:fs';",
    "const spec = process.env.BENCH_PROBE;",
    "const t0 = performance.now();",
    "if (spec) await import(spec);",
    "const ms = performance.now() - t0;",
    "const st = fs.readFileSync('/proc/self/status', 'utf8');",
    "const kb = (k) => Number(new RegExp(k + ':\\\\s+(\\\\d+)').exec(st)[1]);",
    "const cpu = process.cpuUsage();",
    "process.stdout.write(JSON.stringify({ ms, rss: kb('VmRSS'), hwm: kb('VmHWM'), cpuMs: (cpu.user + cpu.system) / 1000 }));",
  ].join("\n");
  const dist = (p) => pathToFileURL(path.join(DIST, p)).href;
  const modules = [
    ["(nothing)", ""],
    ["zod", "zod"],
    ["proper-lockfile", "proper-lockfile"],
    ["ps-list", "ps-list"],
    ["src/domain/schemas.js (zod schemas)", dist("src/domain/schemas.js")],
    ["src/backends/registry.js", dist("src/backends/registry.js")],
    ["src/cli/kit.js", dist("src/cli/kit.js")],
    ["src/dispatch/request.js", dist("src/dispatch/request.js")],
    ["src/dispatch/admit.js", dist("src/dispatch/admit.js")],
    ["src/dispatch/launch.js", dist("src/dispatch/launch.js")],
    ["src/cli/dispatch-command.js (all of dispatch)", dist("src/cli/dispatch-command.js")],
    ["supervisor/main.js (all of the supervisor's start)", dist("supervisor/main.js")],
    ["bin/supervisor.js (the same, bundled: what runs)", dist("bin/supervisor.js")],
    ["src/folder/record.js (supervisor, at the end)", dist("src/folder/record.js")],
    ["src/cli/status-command.js", dist("src/cli/status-command.js")],
  ];
  const table = [];
  for (const [label, spec] of modules) {
    const inProc = [];
    const wall = [];
    const rss = [];
    const hwm = [];
    const cpu = [];
    for (let i = -1; i < REPS.imports; i++) {
      const r = await run(NODE, ["--input-type=module", "-e", probe], {
        env: { ...baseEnv, BENCH_PROBE: spec },
      });
      if (i < 0) continue;
      const v = JSON.parse(r.out);
      inProc.push(v.ms);
      wall.push(r.ms);
      rss.push(v.rss / 1024);
      hwm.push(v.hwm / 1024);
      cpu.push(v.cpuMs);
    }
    const row = {
      module: label,
      importMs: stats(inProc).median,
      processMs: stats(wall).median,
      cpuMs: stats(cpu).median,
      rssMiB: stats(rss).median,
      hwmMiB: stats(hwm).median,
    };
    table.push(row);
    console.log(
      `  ${label.padEnd(52)} import ${fmt(row.importMs, 1).padStart(6)} ms  process ${fmt(row.processMs).padStart(4)} ms  RSS ${fmt(row.rssMiB, 1)} MiB  peak ${fmt(row.hwmMiB, 1)} MiB`,
    );
  }
  extra.imports = table;
}

/** Reaction: agent exit, a cancel file, a deadline → exit.json written. */
async function benchReaction() {
  console.log("\n[reaction] agent exit / cancel / wall deadline → exit.json (mtime)");
  const home = makeHome("reaction");
  const marks = path.join(tmpRoot, "marks-reaction");
  fs.mkdirSync(marks);
  const onExit = [];
  const onCancel = [];
  const onDeadline = [];
  const reasons = { exit: [], cancel: [], deadline: [] };
  let k = 0;
  for (let i = -REPS.warm; i < REPS.reaction; i++) {
    const keep = i >= 0;
    // Agent exit: it sleeps 0.3–0.55 s, stamps its last instruction, exits.
    {
      const mark = path.join(marks, `exit-${k}`);
      const delay = (0.3 + Math.random() * 0.25).toFixed(3);
      const r = await dispatch(home, {
        name: `exit-${k++}`,
        argv: [EXIT_LATER, mark, delay],
        flags: ["--idle", "1m", "--wall", "1m"],
      });
      if (failed("reaction.exit", r)) continue;
      const exitFile = path.join(r.info.dir, "exit.json");
      await waitFor(() => exists(path.join(r.info.dir, "record.json")), 15_000);
      if (keep && exists(exitFile) && exists(mark)) {
        onExit.push(mtimeMs(exitFile) - markMs(mark));
        reasons.exit.push(readJson(exitFile)?.reason);
      }
      await finish([r.info]);
    }
    // Cancel file, written at a random phase of the poll.
    {
      const mark = path.join(marks, `cancel-${k}`);
      const r = await dispatch(home, {
        name: `cancel-${k++}`,
        argv: [QUIET, mark],
        flags: ["--idle", "1m", "--wall", "1m"],
      });
      if (failed("reaction.cancel", r)) continue;
      await waitFor(() => exists(path.join(r.info.dir, "proc.json")), 10_000);
      await sleep(300 + Math.random() * POLL_MS);
      calibrate();
      const t = wallMs();
      fs.writeFileSync(path.join(r.info.dir, "cancel"), `${new Date().toISOString()}\n`);
      const exitFile = path.join(r.info.dir, "exit.json");
      await waitFor(() => exists(exitFile), 10_000, 2);
      if (keep && exists(exitFile)) {
        onCancel.push(mtimeMs(exitFile) - t);
        reasons.cancel.push(readJson(exitFile)?.reason);
      }
      await finish([r.info]);
    }
    // Wall deadline at a random phase of the poll: 1000–1250 ms.
    {
      const mark = path.join(marks, `deadline-${k}`);
      const wall = 1000 + Math.floor(Math.random() * POLL_MS);
      const r = await dispatch(home, {
        name: `deadline-${k++}`,
        argv: [QUIET, mark],
        flags: ["--idle", "1m", "--wall", `${wall}ms`],
      });
      if (failed("reaction.deadline", r)) continue;
      const exitFile = path.join(r.info.dir, "exit.json");
      await waitFor(() => exists(exitFile), 15_000, 10);
      const proc = readJson(path.join(r.info.dir, "proc.json"));
      if (keep && exists(exitFile) && proc !== null) {
        onDeadline.push(mtimeMs(exitFile) - (Date.parse(proc.startedAt) + wall));
        reasons.deadline.push(readJson(exitFile)?.reason);
      }
      await finish([r.info]);
    }
  }
  extra.reactionReasons = reasons;
  const target = {
    text: `≤ pollMs + 50 ms (${POLL_MS + 50} ms), median`,
    ok: (s) => s.median <= POLL_MS + 50,
  };
  const poll = { name: "pollMs", value: POLL_MS };
  addRow({
    key: "reaction.exit",
    what: "reaction: agent exit → exit.json",
    unit: "ms",
    samples: onExit,
    baseline: poll,
    target,
    note: "the supervisor wakes on the child's exit event",
  });
  addRow({
    key: "reaction.cancel",
    what: "reaction: cancel file → exit.json",
    unit: "ms",
    samples: onCancel,
    baseline: poll,
    target,
  });
  addRow({
    key: "reaction.deadline",
    what: "reaction: wall deadline → exit.json",
    unit: "ms",
    samples: onDeadline,
    baseline: poll,
    target,
    note: "deadline = proc.json startedAt + wallMs",
  });
}

/** Stop: deadline → the whole group gone, for an agent that ignores SIGTERM (kill grace 1 s). */
async function benchStop() {
  console.log(`\n[stop] wall deadline → group gone, agent ignores SIGTERM, --kill-grace ${KILL_GRACE_MS}ms`);
  const home = makeHome("stop");
  const marks = path.join(tmpRoot, "marks-stop");
  fs.mkdirSync(marks);
  const gone = [];
  const exitWritten = [];
  const members = [];
  for (let i = -1; i < REPS.stop; i++) {
    const mark = path.join(marks, `stop-${i}`);
    const wall = 1000 + Math.floor(Math.random() * POLL_MS);
    const r = await dispatch(home, {
      name: `stop-${i + 1}`,
      argv: [STUBBORN, mark],
      flags: ["--idle", "1m", "--wall", `${wall}ms`, "--kill-grace", `${KILL_GRACE_MS}ms`],
    });
    if (failed("stop", r)) continue;
    const procFile = path.join(r.info.dir, "proc.json");
    await waitFor(() => exists(procFile) && exists(mark), 10_000);
    await sleep(200);
    const proc = readJson(procFile);
    const group = pids()
      .map((pid) => ({ pid, st: procStat(pid) }))
      .filter((p) => p.st !== null && p.st.pgid === proc.pgid)
      .map((p) => ({ pid: p.pid, startTime: p.st.startTime }));
    const deadline = Date.parse(proc.startedAt) + wall;
    calibrate();
    while (group.some(isAlive) && wallMs() < deadline + 10_000) await sleep(2);
    const goneAt = wallMs();
    const exitFile = path.join(r.info.dir, "exit.json");
    await waitFor(() => exists(exitFile), 10_000);
    if (i >= 0) {
      gone.push(goneAt - deadline);
      if (exists(exitFile)) exitWritten.push(mtimeMs(exitFile) - deadline);
      members.push(group.length);
    }
    await finish([r.info]);
  }
  extra.stopGroupMembers = members;
  const limit = KILL_GRACE_MS + POLL_MS + 50;
  addRow({
    key: "stop.groupGone",
    what: "stop: deadline → group gone (SIGTERM ignored)",
    unit: "ms",
    samples: gone,
    baseline: { name: "killGraceMs", value: KILL_GRACE_MS },
    target: { text: `≤ killGraceMs + pollMs + 50 ms (${limit} ms)`, ok: (s) => s.median <= limit },
  });
  addRow({
    key: "stop.exitWritten",
    what: "stop: deadline → exit.json",
    unit: "ms",
    samples: exitWritten,
    baseline: { name: "killGraceMs", value: KILL_GRACE_MS },
  });
}

/** Ingestion, in-process: LineReader + backend.parse over ~100 MB of recorded lines, against `wc -l`. */
async function benchIngest() {
  console.log(`\n[ingest] ~${INGEST_MB} MB of recorded lines, one core, in-process (dist/)`);
  const { LineReader } = await import(pathToFileURL(path.join(DIST, "src/infra/line-reader.js")).href);
  const { codexBackend } = await import(pathToFileURL(path.join(DIST, "src/backends/codex.js")).href);
  const { claudeCodeBackend } = await import(
    pathToFileURL(path.join(DIST, "src/backends/claude-code.js")).href
  );
  const { initialWatch, observe } = await import(pathToFileURL(path.join(DIST, "src/domain/watch.js")).href);
  const { ActivityWriter } = await import(pathToFileURL(path.join(DIST, "supervisor/activity.js")).href);
  // The supervisor's bite per read: POLL_BUDGET_BYTES of watch-loop.js, read from the build (8 MiB if absent).
  const budgetText = /POLL_BUDGET_BYTES = ([\d\s*]+);/.exec(
    fs.readFileSync(path.join(DIST, "supervisor/watch-loop.js"), "utf8"),
  )?.[1];
  const BUDGET = budgetText
    ? budgetText.split("*").reduce((a, b) => a * Number(b.trim()), 1)
    : 8 * 1024 * 1024;
  extra.ingestBudgetBytes = BUDGET;
  for (const [label, backend, folder] of [
    ["codex", codexBackend, "codex"],
    ["claude", claudeCodeBackend, "claude"],
  ]) {
    const dir = path.join(RECORDED, folder);
    const unit = Buffer.concat(
      fs
        .readdirSync(dir)
        .filter((n) => n.endsWith(".jsonl"))
        .sort()
        .map((n) => {
          const b = fs.readFileSync(path.join(dir, n));
          return b.length > 0 && b[b.length - 1] !== 10 ? Buffer.concat([b, Buffer.from("\n")]) : b;
        }),
    );
    const unitLines = unit.toString("utf8").split("\n").length - 1;
    const chunk = Buffer.concat(Array(Math.max(1, Math.floor((1 << 20) / unit.length))).fill(unit));
    const file = path.join(tmpRoot, `ingest-${label}.jsonl`);
    const fd = fs.openSync(file, "w");
    let size = 0;
    let lines = 0;
    while (size < INGEST_MB * 1e6) {
      fs.writeSync(fd, chunk);
      size += chunk.length;
      lines += (chunk.length / unit.length) * unitLines;
    }
    fs.closeSync(fd);
    const mb = size / 1e6;
    const pass = (mode) => {
      const reader = new LineReader(file);
      let state = initialWatch(0);
      const activity = new ActivityWriter(tmpRoot, { writeJson() {}, createJson: () => true });
      let count = 0;
      let progress = 0;
      const t0 = performance.now();
      for (;;) {
        const read = reader.read(BUDGET);
        for (const line of read.lines) {
          count += 1;
          if (mode === "read") continue;
          const facts = backend.parse(line);
          if (facts.progress) progress += 1;
          if (mode === "loop") {
            state = observe(state, facts, count);
            activity.note(facts);
          }
        }
        if (read.bytes === 0) break;
      }
      const secs = (performance.now() - t0) / 1000;
      reader.close();
      if (count !== lines) throw new Error(`read ${count} lines of ${lines}`);
      return { secs, progress };
    };
    const wc = [];
    const readOnly = [];
    const parse = [];
    const loop = [];
    for (let i = -1; i < REPS.ingest; i++) {
      const w = await run("wc", ["-l", file]);
      const a = pass("read");
      const b = pass("parse");
      const c = pass("loop");
      if (i < 0) continue;
      wc.push(mb / (w.ms / 1000));
      readOnly.push(mb / a.secs);
      parse.push(mb / b.secs);
      loop.push(mb / c.secs);
    }
    const wcBase = { name: "wc -l", value: stats(wc).median, unit: "MB/s" };
    const linesPerMb = lines / mb;
    addRow({ key: `ingest.${label}.wc`, what: `ingest ${label}: baseline wc -l`, unit: "MB/s", samples: wc });
    addRow({
      key: `ingest.${label}.read`,
      what: `ingest ${label}: LineReader only`,
      unit: "MB/s",
      samples: readOnly,
      baseline: wcBase,
    });
    const row = addRow({
      key: `ingest.${label}.parse`,
      what: `ingest ${label}: LineReader + parse`,
      unit: "MB/s",
      samples: parse,
      baseline: wcBase,
      target: { text: "≥ 100 MB/s", ok: (s) => s.median >= 100 },
    });
    addRow({
      key: `ingest.${label}.parseLines`,
      what: `ingest ${label}: LineReader + parse, lines`,
      unit: "klines/s",
      samples: parse.map((v) => (v * linesPerMb) / 1000),
    });
    addRow({
      key: `ingest.${label}.loop`,
      what: `ingest ${label}: + observe + activity (loop body)`,
      unit: "MB/s",
      samples: loop,
      baseline: wcBase,
    });
    extra[`ingest.${label}`] = { file: { mb, lines, avgLineBytes: size / lines }, parseMedian: row.median };
    fs.rmSync(file, { force: true });
  }
}

/** Steady supervisor memory and CPU over a window: a quiet and a chatty agent, against `timeout`. */
async function benchSteady() {
  console.log(
    `\n[steady] ${STEADY_SECS} s window from ${STEADY_WARM_SECS} s after dispatch: quiet and chatty agents (supervisor vs coreutils timeout)`,
  );
  // Bare node peak: a node that stays alive briefly.
  const bare = [];
  const bareRss = [];
  for (let i = 0; i < 5; i++) {
    const child = spawn(NODE, ["-e", "setTimeout(()=>{},1000)"], { stdio: "ignore", env: baseEnv });
    await sleep(800);
    const m = procMem(child.pid);
    if (m !== null) {
      bare.push(m.hwmKb / 1024);
      bareRss.push(m.rssKb / 1024);
    }
    await new Promise((resolve) => child.once("exit", resolve));
  }
  const barePeak = stats(bare).median;
  baselines.bareNodePeakMiB = barePeak;
  addRow({
    key: "baseline.nodePeak",
    what: "baseline: bare node peak (VmHWM of `node -e 'setTimeout(…,1000)'`)",
    unit: "MiB",
    samples: bare,
    decimals: 1,
  });

  const homeQ = makeHome("steady-quiet");
  const homeC = makeHome("steady-chatty");
  const marks = path.join(tmpRoot, "marks-steady");
  fs.mkdirSync(marks);
  const limit = `${STEADY_SECS * 3 + 120}s`;
  const q = await dispatch(homeQ, {
    name: "quiet",
    argv: [QUIET, path.join(marks, "quiet")],
    flags: ["--idle", limit, "--wall", limit],
  });
  const c = await dispatch(homeC, {
    name: "chatty",
    backend: "codex",
    bin: CHATTY,
    brief: "bench: chatty agent",
    env: [`BENCH_CHATTY_HZ=${CHATTY_HZ}`],
    flags: ["--idle", limit, "--wall", limit],
  });
  if (q.info === null || c.info === null)
    throw new Error(`dispatch failed: ${q.err}${q.out} ${c.err}${c.out}`);
  // coreutils timeout supervising the same agents.
  const tqId = `bench-timeout-quiet-${process.pid}`;
  const tcId = `bench-timeout-chatty-${process.pid}`;
  ourDispatchIds.add(tqId);
  ourDispatchIds.add(tcId);
  const tq = spawn("timeout", ["600", QUIET, path.join(marks, "timeout-quiet")], {
    stdio: "ignore",
    env: { ...baseEnv, CATHERD_DISPATCH: tqId },
  });
  const outFd = fs.openSync(path.join(tmpRoot, "timeout-chatty.out"), "a");
  const tc = spawn("timeout", ["600", NODE, CHATTY], {
    stdio: ["ignore", outFd, "ignore"],
    env: { ...baseEnv, CATHERD_DISPATCH: tcId, BENCH_CHATTY_HZ: String(CHATTY_HZ) },
  });
  fs.closeSync(outFd);
  // The floor of any node poller: a bare node doing what one idle poll must (stat both outputs, look for
  // cancel) every 250 ms, and one that only wakes up.
  const floorScript = (work) =>
    `const fs=require('fs');const d=${JSON.stringify(q.info.dir)};setInterval(()=>{${work}},${POLL_MS})`;
  const statWork =
    "try{fs.statSync(d+'/events.jsonl')}catch{}try{fs.statSync(d+'/stderr.log')}catch{}fs.existsSync(d+'/cancel')";
  const floorStat = spawn(NODE, ["-e", floorScript(statWork)], { stdio: "ignore", env: baseEnv });
  const floorWake = spawn(NODE, ["-e", floorScript("")], { stdio: "ignore", env: baseEnv });
  // The floor of the supervisor's quiet schedule: its lock refresh (every 15 s) and safety poll (every 30 s).
  const floorQuiet = spawn(
    NODE,
    ["-e", "setInterval(()=>{},15000);setTimeout(()=>setInterval(()=>{},30000),7000)"],
    {
      stdio: "ignore",
      env: baseEnv,
    },
  );
  own(tq.pid);
  own(floorQuiet.pid);
  own(tc.pid);
  own(floorStat.pid);
  own(floorWake.pid);
  const procs = {
    supQuiet: q.info.supervisorPid,
    supChatty: c.info.supervisorPid,
    timeoutQuiet: tq.pid,
    timeoutChatty: tc.pid,
    floorStat: floorStat.pid,
    floorWake: floorWake.pid,
    floorQuiet: floorQuiet.pid,
  };
  await sleep(STEADY_WARM_SECS * 1000); // past start-up
  const rss = Object.fromEntries(Object.keys(procs).map((k) => [k, []]));
  const cpu0 = Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, cpuSecs(pid)]));
  const sched0 = Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, schedSecs(pid)]));
  const lag = [];
  const activityFile = path.join(c.info.dir, "activity.json");
  let lastAt = null;
  const t0 = performance.now();
  let nextMem = 0;
  while (performance.now() - t0 < STEADY_SECS * 1000) {
    const elapsed = performance.now() - t0;
    if (elapsed >= nextMem) {
      for (const [k, pid] of Object.entries(procs)) {
        const m = procMem(pid);
        if (m !== null) rss[k].push(m.rssKb / 1024);
      }
      nextMem += 1000;
    }
    const a = readJson(activityFile);
    if (a !== null && a.at !== lastAt) {
      lastAt = a.at;
      const m = /t=(\d+)/.exec(a.lastEvent ?? "");
      if (m !== null) lag.push(Date.parse(a.at) - Number(m[1]));
    }
    await sleep(50);
  }
  const window = (performance.now() - t0) / 1000;
  const cpuPerMin = Object.fromEntries(
    Object.entries(procs).map(([k, pid]) => [k, ((cpuSecs(pid) - cpu0[k]) / window) * 60]),
  );
  const pss = { supQuiet: procPssMiB(procs.supQuiet), supChatty: procPssMiB(procs.supChatty) };
  const schedPerMin = Object.fromEntries(
    Object.entries(procs).map(([k, pid]) => [k, ((schedSecs(pid) - sched0[k]) / window) * 60]),
  );
  const hwm = Object.fromEntries(
    Object.entries(procs).map(([k, pid]) => [k, (procMem(pid)?.hwmKb ?? Number.NaN) / 1024]),
  );
  const eventsBytes = fs.statSync(path.join(c.info.dir, "events.jsonl")).size;
  extra.steady = {
    pssMiB: pss,
    windowSecs: window,
    cpuSecsPerMin: cpuPerMin,
    schedstatCpuSecsPerMin: schedPerMin,
    hwmMiB: hwm,
    chattyBytesPerSec: eventsBytes / (window + 2),
    chattyHz: CHATTY_HZ,
  };
  // finish: cancel the dispatches, stop the timeouts (SIGTERM is passed to their agent)
  for (const t of [tq, tc, floorStat, floorWake, floorQuiet]) t.kill("SIGTERM");
  await finish([q.info, c.info]);

  const peak = { name: "bare node peak", value: barePeak };
  const memTarget = { text: "≤ 1.3× bare node peak", ok: (_s, ratio) => ratio <= 1.3 };
  addRow({
    key: "steady.rss.quiet",
    what: "supervisor RSS, quiet agent (steady)",
    unit: "MiB",
    samples: rss.supQuiet,
    baseline: peak,
    target: memTarget,
    decimals: 1,
    note: `PSS at the end ${fmt(pss.supQuiet, 1)} MiB`,
  });
  addRow({
    key: "steady.hwm.quiet",
    what: "supervisor peak (VmHWM), quiet agent",
    unit: "MiB",
    samples: [hwm.supQuiet],
    baseline: peak,
    target: memTarget,
    decimals: 1,
  });
  addRow({
    key: "steady.rss.chatty",
    what: `supervisor RSS, chatty agent (${CHATTY_HZ * 2} lines/s)`,
    unit: "MiB",
    samples: rss.supChatty,
    baseline: peak,
    target: memTarget,
    decimals: 1,
  });
  addRow({
    key: "steady.hwm.chatty",
    what: "supervisor peak (VmHWM), chatty agent",
    unit: "MiB",
    samples: [hwm.supChatty],
    baseline: peak,
    target: memTarget,
    decimals: 1,
  });
  addRow({
    key: "steady.rss.timeout",
    what: "baseline: coreutils timeout RSS, same agents",
    unit: "MiB",
    samples: [...rss.timeoutQuiet, ...rss.timeoutChatty],
    decimals: 1,
  });
  addRow({
    key: "steady.cpu.quiet",
    what: "supervisor CPU, quiet agent",
    unit: "s/min",
    samples: [cpuPerMin.supQuiet],
    baseline: { name: "timeout", value: cpuPerMin.timeoutQuiet },
    target: { text: "≤ 0.1 s/min at pollMs 250", ok: (s) => s.median <= 0.1 },
    decimals: 3,
    note: `resolution 1/${CLK_TCK} s over ${fmt(window)} s; schedstat: ${fmt(schedPerMin.supQuiet, 3)} s/min`,
  });
  addRow({
    key: "steady.cpu.floorStat",
    what: "baseline: bare node polling 250 ms (2 stat + 1 exists)",
    unit: "s/min",
    samples: [cpuPerMin.floorStat],
    decimals: 3,
    note: `schedstat: ${fmt(schedPerMin.floorStat, 3)} s/min`,
  });
  addRow({
    key: "steady.cpu.floorWake",
    what: "baseline: bare node waking every 250 ms, doing nothing",
    unit: "s/min",
    samples: [cpuPerMin.floorWake],
    decimals: 3,
    note: `schedstat: ${fmt(schedPerMin.floorWake, 3)} s/min`,
  });
  addRow({
    key: "steady.cpu.floorQuiet",
    what: "baseline: bare node waking as a quiet supervisor does (timers every 15 s and 30 s)",
    unit: "s/min",
    samples: [cpuPerMin.floorQuiet],
    decimals: 3,
    note: `schedstat: ${fmt(schedPerMin.floorQuiet, 3)} s/min`,
  });
  addRow({
    key: "steady.cpu.chatty",
    what: `supervisor CPU, chatty agent (${CHATTY_HZ * 2} lines/s)`,
    unit: "s/min",
    samples: [cpuPerMin.supChatty],
    baseline: { name: "timeout", value: cpuPerMin.timeoutChatty },
    decimals: 3,
  });
  addRow({
    key: "steady.lag",
    what: "ingestion lag: poll time − write time of the newest line parsed",
    unit: "ms",
    samples: lag,
    baseline: { name: "pollMs", value: POLL_MS },
    target: { text: `≤ one poll (${POLL_MS} ms)`, ok: (s) => s.p95 <= POLL_MS },
    note: "from activity.json (at most 1/s): its `at` is the poll's time, its lastEvent the newest stamp",
  });
}

const LIVE_COUNT = 100;
/** Live dispatch folders (admit.json, spec.json, supervisor.json naming this process) and their markers. */
function generateLive(home, count, run = "default") {
  const runDir = path.join(home, "runs", run);
  fs.mkdirSync(path.join(runDir, "live"), { recursive: true, mode: 0o700 });
  const me = { pid: process.pid, startTime: procStat(process.pid).startTime };
  const now = new Date().toISOString();
  for (let i = 0; i < count; i++) {
    const name = `live-${i}`;
    const id = `${now.replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}-${(i + 36 ** 5).toString(36).slice(-6)}`;
    const dir = path.join(runDir, "dispatches", name, id);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const json = (file, value) =>
      fs.writeFileSync(path.join(dir, file), `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
    json("spec.json", {
      schema: 1,
      dispatchId: id,
      backend: "exec",
      cmd: QUIET,
      args: [],
      env: {},
      cwd: workDir,
      stdinPath: null,
      idleMs: 600000,
      wallMs: 600000,
      stallMs: 300000,
      killGraceMs: 10000,
      graceAfterFinalMs: null,
      pollMs: 250,
      providerRetry: { attempts: 3, windowMs: 180000 },
    });
    json("admit.json", {
      schema: 1,
      dispatchId: id,
      run,
      name,
      backend: "exec",
      model: null,
      cwd: workDir,
      owns: [`own-${i}/`],
      admittedAt: now,
      dispatcher: me,
      git: null,
    });
    json("supervisor.json", { schema: 1, ...me, startedAt: now });
    json("proc.json", { schema: 1, ...me, pgid: me.pid, startedAt: now, argv0: QUIET });
    fs.writeFileSync(
      path.join(runDir, "live", `${id}.json`),
      JSON.stringify({ schema: 1, dispatchId: id, name, dir, owns: [`${workDir}/own-${i}/`] }),
      { mode: 0o600 },
    );
  }
}

let home1000 = null;
function recordedHome() {
  if (home1000 === null) {
    home1000 = makeHome("recorded-1000");
    const t = performance.now();
    generateRecorded(home1000, 1000, { workDir, events: path.join(RECORDED, "codex/tool2.jsonl") });
    extra.generate1000Ms = performance.now() - t;
  }
  return home1000;
}

/** The read side: `catherd status --json` over 1000 recorded dispatches. */
async function benchRead() {
  console.log("\n[read] catherd status over 1000 recorded dispatches (folders written directly)");
  const home = recordedHome();
  const env = { ...baseEnv, CATHERD_HOME: home };
  const json = [];
  const all = [];
  const text = [];
  const node = [];
  let checked = false;
  for (let i = -REPS.warm; i < REPS.status; i++) {
    const n = await run(NODE, ["-e", ""]);
    const a = await run(NODE, [CLI, "status", "--json"], { env });
    const b = await run(NODE, [CLI, "status", "--all", "--json"], { env });
    const c = await run(NODE, [CLI, "status"], { env });
    if (!checked) {
      const rowsSeen = JSON.parse(a.out).dispatches;
      const bad = rowsSeen.filter((r) => r.state !== "recorded" || r.problems.length > 0);
      if (rowsSeen.length !== 1000 || bad.length > 0) {
        throw new Error(
          `status saw ${rowsSeen.length} rows, ${bad.length} not cleanly recorded: ${JSON.stringify(bad[0])}`,
        );
      }
      extra.statusJsonBytes = a.out.length;
      checked = true;
    }
    if (i < 0) continue;
    node.push(n.ms);
    json.push(a.ms);
    all.push(b.ms);
    text.push(c.ms);
  }
  const base = { name: "node -e ''", value: stats(node).median };
  const target = { text: "≤ 300 ms", ok: (s) => s.median <= 300 };
  addRow({
    key: "read.statusJson",
    what: "status --json, 1000 recorded",
    unit: "ms",
    samples: json,
    baseline: base,
    target,
  });
  addRow({
    key: "read.statusAllJson",
    what: "status --all --json, 1000 recorded",
    unit: "ms",
    samples: all,
    baseline: base,
    target,
  });
  addRow({
    key: "read.statusText",
    what: "status (80-column text), 1000 recorded",
    unit: "ms",
    samples: text,
    baseline: base,
    target,
  });
}

/** Admission with 0 and with 1000 recorded dispatches in the run: in-process admit(), and the whole CLI. */
async function benchAdmission() {
  console.log("\n[admission] admit() with 0 vs 1000 recorded dispatches in the run");
  const { validateDispatch } = await import(pathToFileURL(path.join(DIST, "src/dispatch/request.js")).href);
  const { admit } = await import(pathToFileURL(path.join(DIST, "src/dispatch/admit.js")).href);
  const home0 = makeHome("admission-empty");
  const home1k = recordedHome();
  const admitOnce = async (home, name) => {
    const request = validateDispatch({
      backend: "exec",
      name,
      run: "default",
      cwd: workDir,
      env: [],
      brief: null,
      rest: [QUIET, "/dev/null"],
      environment: baseEnv,
    });
    const t = performance.now();
    const admitted = await admit(request, home, () => new Date());
    const ms = performance.now() - t;
    // Not launched: undo it so the run keeps exactly its recorded dispatches and no live one.
    fs.rmSync(path.join(home, "runs/default/live", `${admitted.dispatchId}.json`), { force: true });
    fs.rmSync(path.dirname(admitted.dir), { recursive: true, force: true });
    return ms;
  };
  const zero = [];
  const thousand = [];
  for (let i = -3; i < REPS.admit; i++) {
    const a = await admitOnce(home0, `adm-${i + 3}`);
    const b = await admitOnce(home1k, `adm-${i + 3}`);
    if (i < 0) continue;
    zero.push(a);
    thousand.push(b);
  }
  const z = stats(zero).median;
  addRow({
    key: "admission.inproc.0",
    what: "admit() in-process, 0 recorded",
    unit: "ms",
    samples: zero,
    decimals: 1,
  });
  addRow({
    key: "admission.inproc.1000",
    what: "admit() in-process, 1000 recorded",
    unit: "ms",
    samples: thousand,
    baseline: { name: "0 recorded", value: z },
    // Reading 1000 folders would cost tens of ms (see status): within 2 ms or 1.2× is noise, not growth.
    target: { text: "does not grow (≤ 1.2× or + 2 ms)", ok: (s, ratio) => ratio <= 1.2 || s.median - z <= 2 },
    decimals: 1,
  });
  // Live dispatches are inspected under the lock, one by one: the cost per live dispatch, which is what
  // grows when many are admitted at once (scale). Their supervisor.json names this (live) process.
  const homeLive = makeHome("admission-live");
  generateLive(homeLive, LIVE_COUNT);
  const live = [];
  for (let i = -2; i < REPS.admit; i++) {
    const a = await admitOnce(homeLive, `adm-${i + 2}`);
    if (i >= 0) live.push(a);
  }
  addRow({
    key: `admission.inproc.live${LIVE_COUNT}`,
    what: `admit() in-process, ${LIVE_COUNT} live dispatches`,
    unit: "ms",
    samples: live,
    baseline: { name: "0 recorded", value: z },
    decimals: 1,
    note: `≈ ${fmt((stats(live).median - z) / LIVE_COUNT, 2)} ms per live dispatch, under the run's lock`,
  });
  // The whole CLI, interleaved.
  const marks = path.join(tmpRoot, "marks-admission");
  fs.mkdirSync(marks);
  const cli0 = [];
  const cli1k = [];
  for (let i = -1; i < REPS.admitCli; i++) {
    for (const [home, into] of [
      [home0, cli0],
      [home1k, cli1k],
    ]) {
      const r = await dispatch(home, {
        name: `cli-${i + 1}`,
        argv: [MARK_EXIT, path.join(marks, `m-${into === cli0 ? 0 : 1}-${i}`)],
        flags: ["--idle", "1m", "--wall", "1m"],
      });
      if (failed("admission.cli", r)) continue;
      await waitFor(() => exists(path.join(r.info.dir, "record.json")), 10_000);
      await finish([r.info]);
      if (i >= 0) into.push(r.ms);
    }
  }
  addRow({ key: "admission.cli.0", what: "catherd dispatch, 0 recorded", unit: "ms", samples: cli0 });
  addRow({
    key: "admission.cli.1000",
    what: "catherd dispatch, 1000 recorded",
    unit: "ms",
    samples: cli1k,
    baseline: { name: "0 recorded", value: stats(cli0).median },
    target: { text: "does not grow (≤ 1.2× of 0 recorded)", ok: (_s, ratio) => ratio <= 1.2 },
  });
}

/** Scale: N concurrent dispatches, each a quiet agent. */
async function benchScale() {
  console.log(`\n[scale] ${SCALE.join(", ")} concurrent dispatches (quiet agents)`);
  extra.scale = [];
  for (const n of SCALE) {
    const home = makeHome(`scale-${n}`);
    const marks = path.join(tmpRoot, `marks-scale-${n}`);
    fs.mkdirSync(marks);
    const cpu0 = childCpuMs();
    const t0 = performance.now();
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        dispatch(home, {
          name: `sc-${i}`,
          argv: [QUIET, path.join(marks, `m-${i}`)],
          flags: ["--idle", "10m", "--wall", "10m"],
        }),
      ),
    );
    const totalMs = performance.now() - t0;
    const dispatchCpuSecs = (childCpuMs() - cpu0) / 1000;
    const infos = results.map((r) => r.info);
    const ok = results.filter((r) => r.code === 0 && r.info !== null);
    const failures = results
      .filter((r) => r.code !== 0 || r.info === null)
      .map((r) => (r.err || r.out).trim().split("\n")[0]);
    const toAdmitted = ok.map((r) => Date.parse(r.info.admittedAt) - r.t0w);
    await sleep(1000);
    const sups = ok.map((r) => r.info.supervisorPid);
    const aliveSups = sups.filter((pid) => procStat(pid) !== null);
    const rssMiB = aliveSups.reduce((sum, pid) => sum + (procMem(pid)?.rssKb ?? 0), 0) / 1024;
    const pssMiB = aliveSups.reduce((sum, pid) => sum + (procPssMiB(pid) || 0), 0);
    const windowSecs = QUICK ? 3 : 5;
    const c0 = aliveSups.map(cpuSecs);
    await sleep(windowSecs * 1000);
    const supCpuPerMin = (aliveSups.map(cpuSecs).reduce((s, v, i) => s + (v - c0[i]), 0) / windowSecs) * 60;
    const agentsStarted = ok.filter((r) => exists(path.join(marks, `m-${results.indexOf(r)}`))).length;
    const records = await finish(infos, 60_000 + n * 500);
    // Of the admitted ones (refused ones have no folder): each must end `cancelled`, none lost or missing.
    const statuses = {};
    records.forEach((rec, i) => {
      if (infos[i] === null) return;
      const status = rec?.status ?? "no record";
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
    const lost = ok.length - (statuses.cancelled ?? 0);
    const refused = n - ok.length;
    const entry = {
      n,
      totalMs,
      admitted: ok.length,
      refused,
      failures,
      agentsStarted,
      perDispatchMs: stats(results.map((r) => r.ms)),
      toAdmittedMs: stats(toAdmitted),
      supervisorsRssMiB: rssMiB,
      supervisorsPssMiB: pssMiB,
      supervisorsCpuSecsPerMin: supCpuPerMin,
      dispatchersCpuSecs: dispatchCpuSecs,
      statuses,
      lost,
    };
    extra.scale.push(entry);
    raw[`scale.${n}.perDispatchMs`] = results.map((r) => r.ms);
    raw[`scale.${n}.toAdmittedMs`] = toAdmitted;
    console.log(
      `  n=${n}: all returned in ${fmt(totalMs)} ms; admitted ${ok.length}/${n}; per dispatch median ${fmt(entry.perDispatchMs.median)} ms p95 ${fmt(entry.perDispatchMs.p95)}; invoked→admitted median ${fmt(entry.toAdmittedMs.median)} ms p95 ${fmt(entry.toAdmittedMs.p95)}; supervisors RSS ${fmt(rssMiB)} MiB, CPU ${fmt(supCpuPerMin, 2)} s/min; dispatchers CPU ${fmt(dispatchCpuSecs, 1)} s; records of the admitted ${JSON.stringify(statuses)}; refused ${refused}${failures.length ? `; failures: ${failures.slice(0, 3).join(" / ")}` : ""}`,
    );
    addRow({
      key: `scale.${n}.total`,
      what: `scale: ${n} concurrent dispatches, all returned`,
      unit: "ms",
      samples: [totalMs],
      target:
        n === 100
          ? {
              text: "100 admitted in ≤ 10 s, none lost",
              ok: (s) => s.median <= 10_000 && ok.length === n && lost === 0,
            }
          : null,
      note: `admitted ${ok.length}/${n}, refused ${refused}, lost ${lost}`,
    });
    addRow({
      key: `scale.${n}.toAdmitted`,
      what: `scale: ${n} concurrent, invoked → admitted (per dispatch)`,
      unit: "ms",
      samples: toAdmitted,
    });
    addRow({
      key: `scale.${n}.rss`,
      what: `scale: ${n} concurrent, total supervisor RSS`,
      unit: "MiB",
      samples: [rssMiB],
      note: `PSS (shared file pages counted once): ${fmt(pssMiB)} MiB`,
    });
    addRow({
      key: `scale.${n}.cpu`,
      what: `scale: ${n} concurrent, total supervisor CPU (quiet)`,
      unit: "s/min",
      samples: [supCpuPerMin],
      decimals: 2,
    });
  }
}

// ── main ──────────────────────────────────────────────────────────────────────────────────────────────
function machine() {
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
    clkTck: CLK_TCK,
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
  if (!exists(CLI)) throw new Error(`${CLI} is missing: run npm run build (npm run bench does)`);
  for (const f of [MARK_EXIT, EXIT_LATER, QUIET, STUBBORN, CHATTY]) fs.chmodSync(f, 0o755);
  tmpRoot = fs.mkdtempSync(path.join(process.env.BENCH_TMP ?? os.tmpdir(), "catherd-bench-"));
  workDir = path.join(tmpRoot, "work");
  fs.mkdirSync(workDir);
  const started = performance.now();
  const info = machine();
  const loadStart = os.loadavg();
  console.log(
    `catherd bench${QUICK ? " (quick)" : ""}: ${info.nproc} cores, ${info.memTotal}, node ${info.node}, kernel ${info.kernel}; load ${loadStart.map((l) => l.toFixed(2)).join(" ")}`,
  );
  if (loadStart[0] > info.nproc)
    console.log(
      `  warning: load average ${loadStart[0].toFixed(2)} exceeds ${info.nproc} cores; figures will be noisy`,
    );
  const sections = [
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
  const timings = {};
  let failure = null;
  for (const [name, fn] of sections) {
    if (!want(name)) continue;
    const t = performance.now();
    try {
      await fn();
    } catch (error) {
      failure = error;
      console.error(`\n[${name}] failed: ${error instanceof Error ? error.stack : error}`);
      reap();
      break;
    }
    timings[name] = (performance.now() - t) / 1000;
  }
  const wallSecs = (performance.now() - started) / 1000;
  const leftover = reap();
  const markdown = markdownTable();
  const results = {
    at: new Date().toISOString(),
    quick: QUICK,
    config: {
      reps: REPS,
      steadySecs: STEADY_SECS,
      steadyWarmSecs: STEADY_WARM_SECS,
      ingestMb: INGEST_MB,
      chattyHz: CHATTY_HZ,
      scale: SCALE,
      pollMs: POLL_MS,
      killGraceMs: KILL_GRACE_MS,
      only: ONLY,
    },
    machine: { ...info, loadStart, loadEnd: os.loadavg() },
    wallSecs,
    sectionSecs: timings,
    leftoverKilled: leftover,
    failure: failure === null ? null : String(failure),
    rows,
    extra,
    raw,
    markdown,
  };
  fs.writeFileSync(path.join(ROOT, "bench/results.json"), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\n${textTable()}\n`);
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
  reap();
  process.exitCode = 1;
});
