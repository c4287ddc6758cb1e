// @ts-check
// The queue's two figures (specs/performance.md, "The queue"), on their own: `node bench/queue.mjs` after
// `npm run build`, about a minute.
// 1. admit() in-process with --queue into a run of 1000 recorded and 100 queued dispatches (and one live
//    holder at the run's cap of 1, so each admission is queued): the live index keeps it O(live).
// 2. Promotion latency: a run capped at 1, its holder ends, a queued dispatch waits; from the holder's
//    record.json to the queued one's supervisor.json (its supervisor up) and proc.json (its agent started).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { generateRecorded } from "./lib/generate.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DIST = path.join(ROOT, "dist");
const CLI = path.join(DIST, "bin/catherd.js");
const RECORDED = path.join(ROOT, "test/fixtures/recorded");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "catherd-bench-queue-"));
const REPS = Number(process.env.BENCH_QUEUE_REPS ?? 7);

/** @param {number[]} xs */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

/** @param {number[]} xs */
function p95(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] ?? Number.NaN;
}

/** @param {string} file @param {number} ms */
function waitForFile(file, ms) {
  const until = Date.now() + ms;
  while (!fs.existsSync(file)) {
    if (Date.now() > until) throw new Error(`no ${file} within ${ms} ms`);
    spawnSync("sleep", ["0.01"]);
  }
}

/** @param {string} home @param {string[]} args */
function cli(home, args) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    env: { ...process.env, CATHERD_HOME: home, CATHERD_RUN: "" },
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`catherd ${args.join(" ")}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function admission() {
  const { validateDispatch } = await import(
    pathToFileURL(path.join(DIST, "src/dispatch/request/dispatch-request.js")).href
  );
  const { admit } = await import(pathToFileURL(path.join(DIST, "src/dispatch/admission.js")).href);
  const { systemClock } = await import(pathToFileURL(path.join(DIST, "src/infra/clock.js")).href);
  const home = path.join(tmp, "admission");
  const work = path.join(tmp, "work");
  fs.mkdirSync(work, { recursive: true });
  generateRecorded(home, 1000, { workDir: work, events: path.join(RECORDED, "codex/tool2.jsonl") });
  /** @param {string} name */
  const request = (name) =>
    validateDispatch({
      backend: "exec",
      name,
      run: "default",
      cwd: work,
      env: [],
      brief: null,
      maxParallel: "1",
      queue: true,
      rest: ["/bin/true"],
      environment: process.env,
    });
  // The holder: admitted, never launched, its dispatcher (this process) alive — it stays `starting`.
  await admit(request("holder"), home, systemClock);
  // The baseline, interleaved: the same admission into an empty run, undone after each.
  const empty = path.join(tmp, "admission-empty");
  const times = [];
  const base = [];
  for (let i = 0; i < 100 + REPS * 5; i++) {
    let t = performance.now();
    const admitted = await admit(request(`q-${i}`), home, systemClock);
    const ms = performance.now() - t;
    if (admitted.queued === null) throw new Error("not queued");
    t = performance.now();
    const alone = await admit(request(`e-${i}`), empty, systemClock);
    const baseMs = performance.now() - t;
    fs.rmSync(path.join(empty, "runs/default"), { recursive: true, force: true });
    if (alone.queued !== null) throw new Error("queued in an empty run");
    if (i >= 100) {
      times.push(ms);
      base.push(baseMs);
    }
  }
  console.log(
    `admit() --queue, 1000 recorded + ≥100 queued + 1 live: median ${median(times).toFixed(1)} ms, p95 ${p95(times).toFixed(1)} ms, n ${times.length}; empty run: median ${median(base).toFixed(1)} ms`,
  );
}

function promotion() {
  const lat = [];
  const agentLat = [];
  for (let i = 0; i < REPS; i++) {
    const home = path.join(tmp, `promotion-${i}`);
    const gate = path.join(tmp, `gate-${i}`);
    const holder = cli(home, [
      "dispatch",
      "--backend",
      "exec",
      "--name",
      "holder",
      "--max-parallel",
      "1",
      "--json",
      "--",
      "/bin/sh",
      "-c",
      `while [ ! -e '${gate}' ]; do sleep 0.02; done`,
    ]).dispatched;
    const queued = cli(home, [
      "dispatch",
      "--backend",
      "exec",
      "--name",
      "next",
      "--queue",
      "--json",
      "--",
      "/bin/true",
    ]).dispatched;
    fs.writeFileSync(gate, "");
    waitForFile(path.join(queued.dir, "proc.json"), 30_000);
    const recordAt = fs.statSync(path.join(holder.dir, "record.json")).mtimeMs;
    const sup = JSON.parse(fs.readFileSync(path.join(queued.dir, "supervisor.json"), "utf8"));
    const proc = JSON.parse(fs.readFileSync(path.join(queued.dir, "proc.json"), "utf8"));
    lat.push(Date.parse(sup.startedAt) - recordAt);
    agentLat.push(Date.parse(proc.startedAt) - recordAt);
    waitForFile(path.join(queued.dir, "record.json"), 30_000);
  }
  console.log(
    `promotion: holder's record.json → queued supervisor up: median ${median(lat).toFixed(0)} ms, p95 ${p95(lat).toFixed(0)} ms; → its agent spawned: median ${median(agentLat).toFixed(0)} ms (n ${lat.length})`,
  );
}

console.log(
  `load average at start: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
await admission();
promotion();
console.log(
  `load average at end: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
fs.rmSync(tmp, { recursive: true, force: true });
