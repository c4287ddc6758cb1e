#!/usr/bin/env node
// @ts-check
// Profiles behind specs/performance.md (run after `npm run build`): `node bench/profile.mjs [what…]`,
// what = dispatch, supervisor, tick, memory, ingest, status (default: all). Prints summaries made by
// bench/cpuprofile.mjs; the .cpuprofile files stay in the printed folder for Chrome DevTools.
// Like bench/run.mjs it works in temporary homes and reaps what it starts by pid and CATHERD_DISPATCH.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { generateRecorded } from "./lib/generate.mjs";
import { sleep } from "./lib/wait.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DIST = path.join(ROOT, "dist");
const CLI = path.join(DIST, "bin/catherd.js");
const SUPERVISOR = path.join(DIST, "bin/supervisor.js");
const SUMMARY = path.join(ROOT, "bench/cpuprofile.mjs");
const QUIET = path.join(ROOT, "bench/agents/quiet.sh");
const MARK_EXIT = path.join(ROOT, "bench/agents/mark-exit.sh");
const NODE = process.execPath;
const wanted = process.argv.slice(2);
/** @param {string} w */
const want = (w) => wanted.length === 0 || wanted.includes(w);
const out = fs.mkdtempSync(path.join(os.tmpdir(), "catherd-profile-"));
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("CATHERD_")));
/** The dispatch ids and folder names our agents carry. @type {Set<string>} */
const started = new Set();
console.log(`profiles in ${out}`);

function reap() {
  for (const pid of fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    if (Number(pid) === process.pid) continue;
    let environ;
    try {
      environ = fs.readFileSync(`/proc/${pid}/environ`, "latin1");
    } catch {
      continue;
    }
    const v = environ.split("\0").find((e) => e.startsWith("CATHERD_DISPATCH="));
    if (v !== undefined && started.has(v.slice(17))) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {}
    }
  }
}
process.on("exit", reap);
process.on("SIGINT", () => process.exit(130));

/**
 * Prints the summary of each .cpuprofile in `dir`.
 * @param {string} dir
 * @param {string[]} [extra] bench/cpuprofile.mjs options
 */
const summarize = (dir, extra = []) => {
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith(".cpuprofile"))) {
    console.log(execFileSync(NODE, [SUMMARY, path.join(dir, f), ...extra], { encoding: "utf8" }));
  }
};
/**
 * A hand-written dispatch folder (spec.json only) under the profile folder.
 * @param {string} name
 * @param {Record<string, unknown>} spec
 */
const handFolder = (name, spec) => {
  const dir = path.join(out, name);
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, "spec.json"), JSON.stringify(spec));
  started.add(name);
  return dir;
};
/**
 * Resident memory by kind (MiB), or null when the process is gone.
 * @param {number | undefined} pid
 */
const memOf = (pid) => {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    /** @param {string} key */
    const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(s)?.[1] ?? Number.NaN) / 1024;
    return { rss: kb("VmRSS"), hwm: kb("VmHWM"), anon: kb("RssAnon"), file: kb("RssFile") };
  } catch {
    return null;
  }
};

async function profileDispatch() {
  console.log("\n=== dispatch: node --cpu-prof dist/bin/catherd.js dispatch --backend exec … (quiet agent)");
  const home = path.join(out, "home-dispatch");
  const prof = path.join(out, "dispatch");
  for (let i = 0; i < 3; i++) {
    // the last of three runs is kept: the first ones warm the page cache
    fs.rmSync(prof, { recursive: true, force: true });
    const r = spawnSync(
      NODE,
      [
        "--cpu-prof",
        "--cpu-prof-dir",
        prof,
        CLI,
        "dispatch",
        "--backend",
        "exec",
        "--json",
        "--cwd",
        out,
        "--wall",
        "2s",
        "--",
        QUIET,
        "/dev/null",
      ],
      { env: { ...env, CATHERD_HOME: home }, encoding: "utf8" },
    );
    const info = JSON.parse(r.stdout).dispatched;
    started.add(info.dispatchId);
  }
  summarize(prof, [
    "--mark",
    "main,validateDispatch,planWorkplace,admit,lockWithin,launchSupervisor,readJsonFile",
    "--top",
    "14",
  ]);
  await sleep(3000);
}

async function profileSupervisor() {
  console.log(
    "\n=== supervisor start to record: node --cpu-prof dist/bin/supervisor.js <dir> (agent exits at once)",
  );
  const dir = handFolder("sup-start", { cmd: MARK_EXIT, args: ["/dev/null"] });
  const prof = path.join(out, "supervisor-start");
  const t = performance.now();
  spawnSync(NODE, ["--cpu-prof", "--cpu-prof-dir", prof, SUPERVISOR, dir], { env, stdio: "ignore" });
  console.log(
    `wall ${(performance.now() - t).toFixed(0)} ms; supervisor.log:\n${fs.readFileSync(path.join(dir, "supervisor.log"), "utf8")}`,
  );
  summarize(prof, [
    "--mark",
    "superviseDispatch,tryLock,supervise,spawnAgent,watchAgent,stopDispatch,findByDispatchVariable,record,writeRecord",
    "--top",
    "14",
  ]);

  console.log("\n=== supervisor steady state: quiet agent, 20 s, samples from the first watchAgent");
  const dir2 = handFolder("sup-quiet", { cmd: QUIET, args: ["/dev/null"], wallMs: 20_000, idleMs: 60_000 });
  const prof2 = path.join(out, "supervisor-quiet");
  spawnSync(NODE, ["--cpu-prof", "--cpu-prof-dir", prof2, SUPERVISOR, dir2], { env, stdio: "ignore" });
  summarize(prof2, ["--from", "watchAgent", "--top", "20"]);
}

/** What one idle poll costs, piece by piece, in-process (µs per call, after warm-up). */
async function tickCosts() {
  console.log("\n=== one idle poll, piece by piece (in-process, µs per call)");
  const { LineReader } = await import(pathToFileURL(path.join(DIST, "src/infra/line-reader.js")).href);
  const { systemClock } = await import(pathToFileURL(path.join(DIST, "src/infra/clock.js")).href);
  const { decide, initialWatch } = await import(
    pathToFileURL(path.join(DIST, "src/domain/watch/watch.js")).href
  );
  const dir = path.join(out, "tick");
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, "events.jsonl"), '{"type":"turn.started"}\n');
  const reader = new LineReader(path.join(dir, "events.jsonl"));
  reader.read();
  /** @param {string} label @param {() => unknown} fn @param {number} [n] */
  const time = (label, fn, n = 20_000) => {
    for (let i = 0; i < 1000; i++) fn();
    const t = performance.now();
    for (let i = 0; i < n; i++) fn();
    console.log(`  ${label.padEnd(58)} ${(((performance.now() - t) / n) * 1000).toFixed(2).padStart(8)} µs`);
  };
  time("fs.statSync(events.jsonl)", () => fs.statSync(path.join(dir, "events.jsonl")));
  time("fs.statSync(..., {bigint:false, throwIfNoEntry:false})", () =>
    fs.statSync(path.join(dir, "events.jsonl"), { throwIfNoEntry: false }),
  );
  time("fs.existsSync(cancel) (missing)", () => fs.existsSync(path.join(dir, "cancel")));
  time("LineReader.read() with nothing new", () => reader.read(8 * 1024 * 1024));
  const state = initialWatch(0);
  const limits = {
    idleMs: 60_000,
    wallMs: 60_000,
    stallMs: 30_000,
    graceAfterFinalMs: null,
    retryAttempts: 3,
    retryWindowMs: 180_000,
  };
  time("decide()", () => decide(state, { exited: false, cancelRequested: false }, limits, 1000));
  time("performance.now()", () => performance.now());
  time("new Date().toISOString()", () => new Date().toISOString());
  // CPU (not wall) of one sleep as the loop does it — a timer, an abort listener, clearTimeout — and of a
  // bare setTimeout, each a full event-loop turn.
  const signal = AbortSignal.any([new AbortController().signal, new AbortController().signal]);
  /** @param {() => Promise<unknown>} fn @param {number} [n] */
  const cpuPer = async (fn, n = 2000) => {
    const c = process.cpuUsage();
    for (let i = 0; i < n; i++) await fn();
    const d = process.cpuUsage(c);
    return (d.user + d.system) / n;
  };
  const withSignal = await cpuPer(() => systemClock.sleep(1, signal));
  const plain = await cpuPer(() => new Promise((r) => setTimeout(r, 1)));
  console.log(
    `  ${"clock.sleep(1, signal): CPU per turn".padEnd(58)} ${withSignal.toFixed(2).padStart(8)} µs`,
  );
  console.log(`  ${"setTimeout(1): CPU per turn".padEnd(58)} ${plain.toFixed(2).padStart(8)} µs`);
}

/** The supervisor's RSS with node flags the lead may consider (quiet agent, after 3 s). */
async function memoryVariants() {
  console.log("\n=== supervisor RSS by node flags (quiet agent, 3 s after start; median of 3)");
  const variants = [
    [],
    ["--max-semi-space-size=1"],
    ["--max-semi-space-size=1", "--max-old-space-size=32"],
    ["--single-threaded"],
    ["--jitless"],
    ["--lite-mode"],
  ];
  /** @type {number[]} */
  const bare = [];
  for (let i = 0; i < 3; i++) {
    const c = spawn(NODE, ["-e", "setTimeout(()=>{},1000)"], { stdio: "ignore" });
    await sleep(800);
    const m = memOf(c.pid);
    if (m === null) throw new Error("a bare node died before it was measured");
    bare.push(m.hwm);
    if (i === 0)
      console.log(
        `  bare node: RSS ${m.rss.toFixed(1)} anon ${m.anon.toFixed(1)} file ${m.file.toFixed(1)} MiB`,
      );
    await new Promise((r) => c.once("exit", r));
  }
  /** @param {number[]} xs */
  const med = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  console.log(`  bare node peak ${med(bare).toFixed(1)} MiB`);
  let k = 0;
  for (const flags of variants) {
    /** @type {number[]} */ const rss = [];
    /** @type {number[]} */ const hwm = [];
    /** @type {number[]} */ const anon = [];
    /** @type {number[]} */ const file = [];
    for (let i = 0; i < 3; i++) {
      const dir = handFolder(`mem-${k++}`, {
        cmd: QUIET,
        args: ["/dev/null"],
        wallMs: 60_000,
        idleMs: 60_000,
      });
      const child = spawn(NODE, [...flags, SUPERVISOR, dir], { env, stdio: "ignore" });
      await sleep(3000);
      const m = memOf(child.pid);
      if (m === null) throw new Error(`the supervisor of ${dir} died: see its supervisor.log`);
      rss.push(m.rss);
      hwm.push(m.hwm);
      anon.push(m.anon);
      file.push(m.file);
      fs.writeFileSync(path.join(dir, "cancel"), "");
      await new Promise((r) => child.once("exit", r));
    }
    console.log(
      `  ${(flags.join(" ") || "(default)").padEnd(52)} RSS ${med(rss).toFixed(1)} MiB  peak ${med(hwm).toFixed(1)} MiB  anon ${med(anon).toFixed(1)} file ${med(file).toFixed(1)}  (×${(med(rss) / med(bare)).toFixed(2)} of bare peak)`,
    );
  }
}

async function profileIngest() {
  console.log("\n=== ingestion: LineReader + codex parse over ~30 MB, --cpu-prof");
  const file = path.join(out, "ingest.jsonl");
  const dir = path.join(ROOT, "test/fixtures/recorded/codex");
  const unit = fs
    .readdirSync(dir)
    .filter((n) => n.endsWith(".jsonl"))
    .map((n) => fs.readFileSync(path.join(dir, n), "utf8"))
    .join("");
  fs.writeFileSync(file, unit.repeat(Math.ceil(30e6 / unit.length)));
  const script = `
    const { LineReader } = await import(${JSON.stringify(pathToFileURL(path.join(DIST, "src/infra/line-reader.js")).href)});
    const { codexBackend } = await import(${JSON.stringify(pathToFileURL(path.join(DIST, "src/backends/codex.js")).href)});
    for (let pass = 0; pass < 2; pass++) {
      const reader = new LineReader(${JSON.stringify(file)});
      let n = 0;
      for (;;) { const r = reader.read(8 * 1024 * 1024); for (const line of r.lines) { codexBackend.parse(line); n++; } if (r.bytes === 0) break; }
      reader.close();
    }`;
  const prof = path.join(out, "ingest");
  spawnSync(NODE, ["--cpu-prof", "--cpu-prof-dir", prof, "--input-type=module", "-e", script], {
    env,
    stdio: "inherit",
  });
  summarize(prof, ["--top", "16"]);
  // The same work under the flags that save memory (see memory): how much slower ingestion gets.
  const mb = (2 * fs.statSync(file).size) / 1e6;
  const timed = `const t0 = performance.now();\n${script}\nprocess.stdout.write(String(${mb} / ((performance.now() - t0) / 1000)));`;
  for (const flags of [[], ["--lite-mode"], ["--jitless"]]) {
    const r = spawnSync(NODE, [...flags, "--input-type=module", "-e", timed], { env, encoding: "utf8" });
    console.log(
      `  LineReader + codex parse, ${(flags.join(" ") || "(default)").padEnd(12)} ${Number(r.stdout).toFixed(0)} MB/s`,
    );
  }
}

async function profileStatus() {
  console.log("\n=== status --json over 1000 recorded dispatches, --cpu-prof");
  const home = path.join(out, "home-status");
  generateRecorded(home, 1000, {
    workDir: out,
    events: path.join(ROOT, "test/fixtures/recorded/codex/tool2.jsonl"),
  });
  const prof = path.join(out, "status");
  for (let i = 0; i < 3; i++) {
    fs.rmSync(prof, { recursive: true, force: true });
    const t = performance.now();
    spawnSync(NODE, ["--cpu-prof", "--cpu-prof-dir", prof, CLI, "status", "--json"], {
      env: { ...env, CATHERD_HOME: home },
      stdio: "ignore",
    });
    if (i === 2) console.log(`wall ${(performance.now() - t).toFixed(0)} ms (with the profiler)`);
  }
  summarize(prof, ["--mark", "main,overview,listDispatchDirs,readJsonFile,recordedRow", "--top", "14"]);
}

async function main() {
  if (want("dispatch")) await profileDispatch();
  if (want("supervisor")) await profileSupervisor();
  if (want("tick")) await tickCosts();
  if (want("memory")) await memoryVariants();
  if (want("ingest")) await profileIngest();
  if (want("status")) await profileStatus();
  reap();
}
main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
