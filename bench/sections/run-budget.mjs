// @ts-check
// A run's budget (specs/dispatch.md §11): what watching it costs at 1, 10 and 50 live dispatches, to show
// that it does not grow with the run. Every dispatch is an opencode-like agent that reports one step's
// usage and then sleeps (bench/agents/spend-once.sh), in one run with a --run-budget no one reaches, so
// each supervisor has its part in the run's ledger and looks at the run's spend once a second.
//
// Measured at each size:
//   - each supervisor's CPU (utime + stime of /proc/<pid>/stat) over a fixed window, per minute, beside a
//     bare node waking once a second (the look's cadence) doing nothing;
//   - then, after that window, one supervisor's look, timed in this process through the supervisor's own
//     RunBudgetWatch.look on a live dispatch's folder (it reads the budget and the run's spend as that
//     supervisor does), filed by whether it found the run's sum fresh (it reads it) or stale (it makes it);
//   - admission's and promotion's check of the budget under the run's lock (runCapsUnderLock's spentNow:
//     the ledger summed exactly as it is on disk), and the runBudgetView that `status` shows (the shared
//     sum).
// Only these public functions are called, never the ledger's internals: how they sum the run's spend may
// change and this section measures whichever way it is.
import { spawn } from "node:child_process";
import { dispatch, finish } from "../lib/catherd.mjs";
import {
  AGENT,
  BASE_ENV,
  CLK_TCK,
  QUICK,
  RUN_BUDGET_LIVE as SIZES,
  STEADY_SECS,
  STEADY_WARM_SECS,
} from "../lib/config.mjs";
import { cpuSecs, procStat, schedSecs } from "../lib/proc.mjs";
import { budgetApi, timeChecks } from "../lib/run-budget-checks.mjs";
import { timed } from "../lib/spawn.mjs";
import { fmt, stats } from "../lib/stats.mjs";
import { exists, sleep, waitFor } from "../lib/wait.mjs";

/** The run every dispatch goes into, and its budget: far above what the agents spend (10,100 tokens each). */
const RUN = "budget";
const RUN_BUDGET = "tokens=1G,usd=1000,minutes=600";
/** Dispatches started at once: a few, so that 50 admissions do not starve the shared machine's two cores. */
const AT_ONCE = 5;
/** Timed checks per size (each kind), spread over CHECKS_SECS so that they find the run's sum at every age. */
const CHECKS = QUICK ? 40 : 120;
const CHECKS_SECS = QUICK ? 10 : 30;

/** @typedef {import("../lib/catherd.mjs").Dispatched} Dispatched */

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchRunBudget(ctx) {
  console.log(
    `\n[runbudget] ${SIZES.join(", ")} live dispatches under one --run-budget: supervisors' CPU over ${STEADY_SECS} s, one look, admission's check`,
  );
  const { report, reaper, scratch, node } = ctx;
  const api = await budgetApi();
  /** @type {number[]} */ const nodeCpu = [];
  for (let i = 0; i < 5; i++) nodeCpu.push((await timed(node, ["-e", ""])).cpuMs);
  report.row({
    key: "runbudget.baseline.nodeStartCpu",
    what: "baseline: `node -e ''` CPU (user+sys)",
    unit: "ms",
    samples: nodeCpu,
  });
  /** @type {Record<string, unknown>[]} */
  const entries = [];
  report.extra.runBudget = entries;
  /** The first size's figures, the baseline of the larger runs. @type {{ cpu: number, look: number, lookStale: number, caps: number } | null} */
  let one = null;
  const first = `${SIZES[0]} live`;
  for (const n of SIZES) {
    const home = scratch.home(`runbudget-${n}`);
    /** @type {(Dispatched | null)[]} */
    const infos = [];
    // A bare node waking every second, as a quiet supervisor of a run with a budget must, in the same window.
    const floor = spawn(node, ["-e", "setInterval(()=>{},1000)"], { stdio: "ignore", env: BASE_ENV });
    reaper.own(floor.pid);
    try {
      const live = await dispatchLive(ctx, home, n, infos);
      const run = api.runPaths(home, RUN);
      // Every supervisor has written its part (its one report), so the run's ledger holds n parts.
      const parts = await waitFor(
        () => live.every((d) => exists(api.spendFile(run, d.dispatchId))),
        60_000 + n * 1000,
        50,
      );
      if (parts === null) throw new Error(`not every supervisor of ${n} wrote its part of the ledger`);
      await sleep(STEADY_WARM_SECS * 1000); // past start-up: V8's compiles and its memory reducer
      const pids = live.map((d) => d.supervisorPid);
      const watched = [...pids, floor.pid ?? -1];
      const cpu0 = watched.map(cpuSecs);
      const sched0 = watched.map(schedSecs);
      const t0 = performance.now();
      await sleep(STEADY_SECS * 1000);
      const windowSecs = (performance.now() - t0) / 1000;
      const perMin = watched.map((pid, i) => ((cpuSecs(pid) - (cpu0[i] ?? Number.NaN)) / windowSecs) * 60);
      const floorPerMin = perMin.pop() ?? Number.NaN;
      // The scheduler's count (ns) as a cross-check of the tick-sampled utime + stime.
      const schedPerMin = watched.map(
        (pid, i) => ((schedSecs(pid) - (sched0[i] ?? Number.NaN)) / windowSecs) * 60,
      );
      const floorSchedPerMin = schedPerMin.pop() ?? Number.NaN;
      const alive = pids.filter((pid) => procStat(pid) !== null).length;
      // The checks come after the window: they sum the run's spend as any look does, and would spare the
      // supervisors measured above some of theirs (all of them at 1 live).
      const checks = await timeChecks(api, run, live[0], CHECKS, CHECKS_SECS * 1000);
      const spend = await api.runBudgetView(run, api.readRunFile(run), Date.now());
      const cpu = stats(perMin);
      const look = stats(checks.look);
      const caps = stats(checks.caps);
      one ??= {
        cpu: cpu.median,
        look: stats(checks.lookFresh).median,
        lookStale: stats(checks.lookStale).median,
        caps: caps.median,
      };
      const base = n === SIZES[0] ? null : one;
      entries.push({
        n,
        supervisorsAlive: alive,
        windowSecs,
        cpuSecsPerMin: perMin,
        floorCpuSecsPerMin: floorPerMin,
        schedstatCpuSecsPerMin: schedPerMin,
        floorSchedstatCpuSecsPerMin: floorSchedPerMin,
        totalCpuSecsPerMin: perMin.reduce((a, b) => a + b, 0),
        lookMs: look,
        lookFreshMs: stats(checks.lookFresh),
        lookStaleMs: stats(checks.lookStale),
        admissionCheckMs: caps,
        runBudgetViewMs: stats(checks.view),
        runFileReadMs: stats(checks.runFile),
        spend: spend?.spend ?? null,
        crossing: spend?.spent ?? null,
      });
      console.log(
        `  n=${n}: ${alive}/${n} supervisors alive; the run spent ${spend?.spend.tokens ?? "?"} tokens over ${spend?.spend.dispatches ?? "?"} dispatches (${spend?.spend.live ?? "?"} live); window ${fmt(windowSecs, 1)} s`,
      );
      report.row({
        key: `runbudget.${n}.cpu`,
        what: `run budget, ${n} live: CPU per supervisor`,
        unit: "s/min",
        samples: perMin,
        decimals: 3,
        baseline:
          base === null
            ? { name: "bare node waking every 1 s", value: floorPerMin }
            : { name: first, value: base.cpu },
        target: base === null ? null : flat(base.cpu, 0.05),
        note: `resolution 1/${CLK_TCK} s over ${fmt(windowSecs)} s; schedstat ${fmt(stats(schedPerMin).median, 3)} s/min; bare node waking every 1 s: ${fmt(floorPerMin, 3)} s/min (schedstat ${fmt(floorSchedPerMin, 3)})`,
      });
      report.row({
        key: `runbudget.${n}.cpuAll`,
        what: `run budget, ${n} live: CPU of all its supervisors`,
        unit: "s/min",
        samples: [perMin.reduce((a, b) => a + b, 0)],
        decimals: 2,
      });
      report.row({
        key: `runbudget.${n}.look`,
        what: `run budget, ${n} live: one supervisor's look (RunBudgetWatch.look)`,
        unit: "ms",
        samples: checks.look,
        decimals: 2,
        note: `mean ${fmt(look.mean ?? Number.NaN, 2)} ms; ${checks.lookStale.length} of ${checks.look.length} found the sum stale`,
      });
      report.row({
        key: `runbudget.${n}.lookFresh`,
        what: `run budget, ${n} live: a look that reads the run's sum`,
        unit: "ms",
        samples: checks.lookFresh,
        decimals: 2,
        baseline:
          base === null
            ? { name: "read run.json", value: stats(checks.runFile).median }
            : { name: first, value: base.look },
        target: base === null ? null : flat(base.look, 1),
      });
      report.row({
        key: `runbudget.${n}.lookStale`,
        what: `run budget, ${n} live: a look that finds the sum stale (makes it)`,
        unit: "ms",
        samples: checks.lookStale,
        decimals: 2,
        baseline: base === null ? null : { name: first, value: base.lookStale },
      });
      report.row({
        key: `runbudget.${n}.admissionCheck`,
        what: `run budget, ${n} live: admission's check (runCapsUnderLock → spentNow, exact sum)`,
        unit: "ms",
        samples: checks.caps,
        decimals: 2,
        baseline:
          base === null
            ? { name: "read run.json", value: stats(checks.runFile).median }
            : { name: first, value: base.caps },
        target: base === null ? null : flat(base.caps, 1),
        note: `runBudgetView (status): median ${fmt(stats(checks.view).median, 2)} ms`,
      });
    } finally {
      floor.kill("SIGKILL");
      const records = await finish(ctx, infos, 60_000 + n * 1000);
      const unrecorded = records.filter((r, i) => infos[i] !== null && r?.status !== "cancelled").length;
      if (unrecorded > 0) console.log(`  ! n=${n}: ${unrecorded} dispatch(es) not recorded cancelled`);
    }
  }
}

/**
 * Starts `n` dispatches into the run, AT_ONCE at a time; each one answered goes into `infos` (so that the
 * caller finishes it whatever happens next). Returns them, or throws when one was refused.
 * @param {import("../lib/context.mjs").BenchContext} ctx
 * @param {string} home
 * @param {number} n
 * @param {(Dispatched | null)[]} infos
 * @returns {Promise<Dispatched[]>}
 */
async function dispatchLive(ctx, home, n, infos) {
  /** @type {string[]} */
  const failures = [];
  for (let from = 0; from < n; from += AT_ONCE) {
    const batch = Array.from({ length: Math.min(AT_ONCE, n - from) }, (_, k) =>
      dispatch(ctx, home, {
        name: `rb-${from + k}`,
        backend: "opencode",
        bin: AGENT.spendOnce,
        brief: "bench: report once, then sleep",
        flags: ["--run", RUN, "--run-budget", RUN_BUDGET, "--idle", "10m", "--wall", "10m"],
      }),
    );
    for (const r of await Promise.all(batch)) {
      infos.push(r.info);
      if (r.info === null || r.code !== 0) failures.push(`${r.err}${r.out}`.trim().split("\n")[0] ?? "");
    }
  }
  if (failures.length > 0) throw new Error(`${failures.length} of ${n} dispatches failed: ${failures[0]}`);
  return infos.filter((i) => i !== null);
}

/**
 * Flat from the first size: within 1.5× of its figure, or within `slack` of it (near the clock's
 * resolution, a ratio says nothing).
 * @param {number} oneLive
 * @param {number} slack
 * @returns {import("../lib/report.mjs").Target}
 */
function flat(oneLive, slack) {
  return {
    text: `flat: ≤ 1.5× of ${SIZES[0]} live or + ${slack}`,
    ok: (s, ratio) => (ratio !== null && ratio <= 1.5) || s.median - oneLive <= slack,
  };
}
