// @ts-check
// The dashboard (specs/ui.md, "What was measured"): `catherd ui` over a run of 1000 recorded and 50 live
// dispatches (folders written directly; the live ones name this process as their supervisor, so every
// reader sees them running): the server's load, the first paint of the run's page in Chromium, the time
// from a live dispatch's activity.json being rewritten to the page showing it, and the server's CPU while
// the page is open and nothing moves. The browser rows need Debian's chromium (as the tests do); without
// it they are left out, with a note.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { CHROMIUM_ARGS, findChromium } from "../../scripts/chromium.mjs";
import { BASE_ENV, CLI, QUICK, RECORDED, REPS } from "../lib/config.mjs";
import { generateLive, generateRecorded } from "../lib/generate.mjs";
import { cpuSecs } from "../lib/proc.mjs";
import { fmt, stats } from "../lib/stats.mjs";
import { sleep, waitFor } from "../lib/wait.mjs";

const CHROMIUM = findChromium();

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchUi(ctx) {
  console.log("\n[ui] catherd ui over 1000 recorded + 50 live dispatches in one run");
  const { report, scratch, node } = ctx;
  const home = scratch.home("ui");
  generateRecorded(home, 1000, {
    workDir: scratch.workDir,
    events: path.join(RECORDED, "codex/tool2.jsonl"),
  });
  generateLive(home, 50, { workDir: scratch.workDir, agent: "/bin/true" });
  const liveDirs = fs
    .readdirSync(path.join(home, "runs/default/live"))
    .map((f) => JSON.parse(fs.readFileSync(path.join(home, "runs/default/live", f), "utf8")).dir);

  const t0 = performance.now();
  const child = spawn(node, [CLI, "ui", "--no-open"], {
    env: { ...BASE_ENV, CATHERD_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  ctx.reaper.own(child.pid);
  /** @type {import("playwright-core").BrowserContext | null} */
  let browser = null;
  try {
    const url = await printedUrl(child);
    const origin = new URL(url).origin;
    const token = new URL(url).search;
    // The server's own load: until the run's JSON is answered (it waits for the run to be read whole).
    const cookie = await cookieOf(url);
    const api = await fetch(`${origin}/api/runs/default`, { headers: { Cookie: cookie } });
    const body = /** @type {{ rows: unknown[] }} */ (await api.json());
    const loadMs = performance.now() - t0;
    if (body.rows.length !== 1050) throw new Error(`the run's page has ${body.rows.length} rows, not 1050`);
    report.row({
      key: "ui.load",
      what: "ui: start → run of 1000+50 answered",
      unit: "ms",
      samples: [loadMs],
    });

    if (CHROMIUM === null) {
      console.log("  (no chromium: first paint and update latency not measured)");
    } else {
      const { chromium } = await import("playwright-core");
      browser = await chromium.launchPersistentContext(
        fs.mkdtempSync(path.join(os.tmpdir(), "bench-chromium-")),
        {
          executablePath: CHROMIUM,
          headless: true,
          args: CHROMIUM_ARGS,
        },
      );
      /** @type {number[]} */ const paints = [];
      /** @type {number[]} */ const wholes = [];
      for (let i = -1; i < (QUICK ? 3 : 7); i++) {
        const page = await browser.newPage();
        const start = performance.now();
        await page.goto(`${origin}/runs/default${token}`);
        // First paint: the first screenful of rows (the page builds 150 a frame) and the whole timeline.
        await inPage(
          page,
          "document.querySelectorAll('tr.dispatch-row').length >= 150 && document.querySelectorAll('rect.bar').length === 1050",
          30_000,
        );
        const painted = performance.now() - start;
        await inPage(page, "document.querySelectorAll('tr.dispatch-row').length === 1050", 30_000);
        if (i >= 0) {
          paints.push(painted);
          wholes.push(performance.now() - start);
        }
        await page.close();
      }
      report.row({
        key: "ui.firstPaint",
        what: "ui: first paint of a run of 1000+50 (first 150 rows, whole timeline)",
        unit: "ms",
        samples: paints,
        target: { text: "≤ 1000 ms", ok: (s) => s.median <= 1000 },
      });
      report.row({
        key: "ui.allRows",
        what: "ui: a run of 1000+50, every row built",
        unit: "ms",
        samples: wholes,
      });

      const page = await browser.newPage();
      await page.goto(`${origin}/runs/default${token}`);
      await inPage(page, "document.querySelectorAll('tr.dispatch-row').length === 1050", 30_000);
      /** @type {number[]} */ const updates = [];
      for (let i = -1; i < REPS.status * 2; i++) {
        const dir = liveDirs[(i + 1) % liveDirs.length];
        const id = path.basename(dir);
        const word = `step-${i + 1}-${Math.random().toString(36).slice(2, 8)}`;
        const start = performance.now();
        writeActivity(dir, word);
        await inPage(
          page,
          `document.querySelector('tr[data-id="${id}"] td.doing')?.textContent.includes("${word}")`,
          10_000,
        );
        if (i >= 0) updates.push(performance.now() - start);
        await sleep(150);
      }
      report.row({
        key: "ui.update",
        what: "ui: a live dispatch's activity.json rewritten → shown (1050 rows)",
        unit: "ms",
        samples: updates,
        target: { text: "≤ 1000 ms", ok: (s) => s.median <= 1000 },
      });

      /** @type {number[]} */ const appears = [];
      for (let i = -1; i < REPS.status; i++) {
        const start = performance.now();
        const id = admitLive(home, `appear-${i + 1}`, liveDirs[0] ?? "");
        await inPage(page, `document.querySelector('tr[data-id="${id}"]') !== null`, 10_000);
        if (i >= 0) appears.push(performance.now() - start);
      }
      report.row({
        key: "ui.appear",
        what: "ui: a dispatch admitted (folder, then live marker) → its row shown",
        unit: "ms",
        samples: appears,
        target: { text: "≤ 1000 ms", ok: (s) => s.median <= 1000 },
      });
    }

    // Idle: the page open (its event stream connected), nothing moving.
    const windowSecs = QUICK ? 10 : 30;
    await sleep(2000);
    const c0 = cpuSecs(/** @type {number} */ (child.pid));
    await sleep(windowSecs * 1000);
    const idlePct = ((cpuSecs(/** @type {number} */ (child.pid)) - c0) / windowSecs) * 100;
    report.row({
      key: "ui.idleCpu",
      what: `ui: server CPU with a page open, nothing moving (1000+50, ${windowSecs} s)`,
      unit: "% core",
      samples: [idlePct],
      decimals: 2,
      target: { text: "≤ 1 %", ok: (s) => s.median <= 1 },
    });
    console.log(`  load ${fmt(loadMs)} ms; idle CPU ${fmt(idlePct, 2)} % of a core`);
    report.extra.uiRows = 1050;
    report.extra.uiUpdate = report.raw["ui.update"] === undefined ? null : stats(report.raw["ui.update"]);
  } finally {
    await browser?.close();
    child.kill("SIGINT");
    await waitFor(() => child.exitCode !== null || child.signalCode !== null, 10_000);
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}

/**
 * Polls `expression` in the page every 10 ms until it is true. Not waitForFunction: that turns its
 * predicate into a function in the page, which the dashboard's CSP forbids (no eval); an evaluation
 * through the DevTools protocol is not the page's own script.
 * @param {import("playwright-core").Page} page
 * @param {string} expression
 * @param {number} timeoutMs
 */
async function inPage(page, expression, timeoutMs) {
  const deadline = performance.now() + timeoutMs;
  while ((await page.evaluate(expression)) !== true) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${expression}`);
    await sleep(10);
  }
}

/**
 * Admits a dispatch as admission commits one — its folder in place, then its live marker — copying the
 * files of a live folder of the same run (their supervisor: this process). Returns its id.
 * @param {string} home
 * @param {string} name
 * @param {string} like
 */
function admitLive(home, name, like) {
  const now = new Date();
  const id = `${now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")}-${Math.random().toString(36).slice(2, 8).padEnd(6, "0")}`;
  const dir = path.join(home, "runs/default/dispatches", name, id);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const file of ["spec.json", "admit.json", "supervisor.json", "proc.json"]) {
    const value = JSON.parse(fs.readFileSync(path.join(like, file), "utf8"));
    if (file === "spec.json") value.dispatchId = id;
    if (file === "admit.json") Object.assign(value, { dispatchId: id, name, admittedAt: now.toISOString() });
    fs.writeFileSync(path.join(dir, file), JSON.stringify(value), { mode: 0o600 });
  }
  fs.writeFileSync(
    path.join(home, "runs/default/live", `${id}.json`),
    JSON.stringify({ schema: 1, dispatchId: id, name, dir, owns: [] }),
    { mode: 0o600 },
  );
  return id;
}

/**
 * Rewrites activity.json as a supervisor does (a temp file renamed over it).
 * @param {string} dir
 * @param {string} lastEvent
 */
function writeActivity(dir, lastEvent) {
  const now = new Date().toISOString();
  const file = path.join(dir, "activity.json");
  const temp = `${file}.bench.tmp`;
  fs.writeFileSync(
    temp,
    JSON.stringify({
      schema: 1,
      at: now,
      lastEvent,
      lastEventAt: now,
      openToolCalls: [],
      retrying: 0,
      retries: 0,
      tokens: { input: 1, cached: 0, output: 1 },
      thread: null,
    }),
  );
  fs.renameSync(temp, file);
}

/**
 * The address `catherd ui` prints.
 * @param {import("node:child_process").ChildProcess} child
 * @returns {Promise<string>}
 */
function printedUrl(child) {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`catherd ui printed no address: ${out}`)), 20_000);
    child.stdout?.on("data", (d) => {
      out += d.toString();
      const m = /catherd ui: (http:\/\/\S+)\n/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(/** @type {string} */ (m[1]));
      }
    });
    child.once("exit", (code) => reject(new Error(`catherd ui exited ${code}: ${out}`)));
  });
}

/**
 * The session cookie the printed token buys.
 * @param {string} url
 */
async function cookieOf(url) {
  const res = await fetch(url, { redirect: "manual" });
  const cookie = res.headers.get("set-cookie");
  if (cookie === null) throw new Error(`no cookie for the token (${res.status})`);
  return /** @type {string} */ (cookie.split(";")[0]);
}
