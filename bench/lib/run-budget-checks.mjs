// @ts-check
// The run-budget section's checks (bench/sections/run-budget.mjs), timed in the bench's own process
// through the public functions a supervisor, admission and `status` call, loaded from the build.
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { DIST } from "./config.mjs";
import { readJson, sleep } from "./wait.mjs";

/** @typedef {import("./catherd.mjs").Dispatched} Dispatched */

/**
 * Times the checks, `count` of each, interleaved, spread over `windowMs`: a supervisor's look (its watch
 * built on a live dispatch's folder, asked with a clock a look apart each time and no new report, so it
 * never writes that dispatch's part), admission's check and runBudgetView, and a read of run.json (the
 * floor of any check). Each look is also filed by the age of the run's last sum just before it
 * (spend-now.json's `at`, dispatch-folder.md): fresh, the look reads it; stale, it makes it (or finds the
 * lock taken).
 * @param {Api} api
 * @param {import("../../src/infra/paths.js").RunPaths} run
 * @param {Dispatched | undefined} sample
 * @param {number} count
 * @param {number} windowMs
 */
export async function timeChecks(api, run, sample, count, windowMs) {
  if (sample === undefined) throw new Error("no live dispatch to look from");
  const watch = api.RunBudgetWatch.of(sample.dir, () => {});
  if (watch === null) throw new Error(`${sample.dir} is not laid out in a run`);
  /** @type {Record<"look" | "lookFresh" | "lookStale" | "caps" | "view" | "runFile", number[]>} */
  const times = { look: [], lookFresh: [], lookStale: [], caps: [], view: [], runFile: [] };
  const noSpend = async () => ({ tokens: 0, costUsd: 0, priced: false });
  const gapMs = windowMs / count;
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    let t = performance.now();
    const runFile = api.readRunFile(run);
    times.runFile.push(performance.now() - t);
    const fresh = sumAgeMs(run) < api.SUM_EVERY_MS;
    t = performance.now();
    await watch.look((i + 1) * api.RUN_LOOK_MS, new Date(), 0, noSpend);
    const lookMs = performance.now() - t;
    times.look.push(lookMs);
    (fresh ? times.lookFresh : times.lookStale).push(lookMs);
    t = performance.now();
    await api.runCapsUnderLock(run, runFile, Date.now).spentNow();
    times.caps.push(performance.now() - t);
    t = performance.now();
    await api.runBudgetView(run, runFile, Date.now());
    times.view.push(performance.now() - t);
    await sleep(Math.max(0, start + (i + 1) * gapMs - performance.now()));
  }
  return times;
}

/**
 * How old the run's last sum is (ms; Infinity when there is none).
 * @param {import("../../src/infra/paths.js").RunPaths} run
 */
function sumAgeMs(run) {
  const at = Date.parse(readJson(run.spendNow)?.at ?? "");
  return Number.isFinite(at) ? Date.now() - at : Number.POSITIVE_INFINITY;
}

/** @typedef {Awaited<ReturnType<typeof budgetApi>>} Api */

/** The public functions measured, from the build. */
export async function budgetApi() {
  /** @param {string} file */
  const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);
  const watch = /** @type {typeof import("../../supervisor/run-budget-watch.js")} */ (
    await load("supervisor/run-budget-watch.js")
  );
  const budget = /** @type {typeof import("../../src/dispatch/read/budget-left.js")} */ (
    await load("src/dispatch/read/budget-left.js")
  );
  const runFile = /** @type {typeof import("../../src/folder/run-file.js")} */ (
    await load("src/folder/run-file.js")
  );
  const paths = /** @type {typeof import("../../src/infra/paths.js")} */ (await load("src/infra/paths.js"));
  const spendNow = /** @type {typeof import("../../src/folder/run-spend-now.js")} */ (
    await load("src/folder/run-spend-now.js")
  );
  return {
    RunBudgetWatch: watch.RunBudgetWatch,
    RUN_LOOK_MS: watch.RUN_LOOK_MS,
    SUM_EVERY_MS: spendNow.SUM_EVERY_MS,
    runCapsUnderLock: budget.runCapsUnderLock,
    runBudgetView: budget.runBudgetView,
    readRunFile: runFile.readRunFile,
    runPaths: paths.runPaths,
    spendFile: paths.spendFile,
  };
}
