// @ts-check
// Steady supervisor memory and CPU over a window, a quiet and a chatty agent, against coreutils `timeout`
// supervising the same agents and against bare nodes that wake as a poller must.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { dispatch, finish } from "../lib/catherd.mjs";
import {
  AGENT,
  BASE_ENV,
  CHATTY_HZ,
  CLK_TCK,
  POLL_MS,
  STEADY_SECS,
  STEADY_WARM_SECS,
} from "../lib/config.mjs";
import { cpuSecs, procMem, procPrivate, procPssMiB, schedSecs } from "../lib/proc.mjs";
import { fmt, stats } from "../lib/stats.mjs";
import { readJson, sleep } from "../lib/wait.mjs";

/** @typedef {"supQuiet" | "supChatty" | "timeoutQuiet" | "timeoutChatty" | "floorStat" | "floorWake" | "floorQuiet"} Watched */

/**
 * Applies `fn` to each watched process.
 * @template T
 * @param {Record<Watched, number>} procs
 * @param {(pid: number, key: Watched) => T} fn
 * @returns {Record<Watched, T>}
 */
const each = (procs, fn) =>
  /** @type {Record<Watched, T>} */ (
    Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, fn(pid, /** @type {Watched} */ (k))]))
  );

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchSteady(ctx) {
  console.log(
    `\n[steady] ${STEADY_SECS} s window from ${STEADY_WARM_SECS} s after dispatch: quiet and chatty agents (supervisor vs coreutils timeout)`,
  );
  const { report, reaper, scratch, node } = ctx;
  // Bare node peak: a node that stays alive briefly.
  /** @type {number[]} */ const bare = [];
  for (let i = 0; i < 5; i++) {
    const child = spawn(node, ["-e", "setTimeout(()=>{},1000)"], { stdio: "ignore", env: BASE_ENV });
    await sleep(800);
    const m = child.pid === undefined ? null : procMem(child.pid);
    if (m !== null) bare.push(m.hwmKb / 1024);
    await new Promise((resolve) => child.once("exit", resolve));
  }
  const barePeak = stats(bare).median;
  report.row({
    key: "baseline.nodePeak",
    what: "baseline: bare node peak (VmHWM of `node -e 'setTimeout(…,1000)'`)",
    unit: "MiB",
    samples: bare,
    decimals: 1,
  });

  const homeQ = scratch.home("steady-quiet");
  const homeC = scratch.home("steady-chatty");
  const marks = scratch.marks("steady");
  const limit = `${STEADY_SECS * 3 + 120}s`;
  const q = await dispatch(ctx, homeQ, {
    name: "quiet",
    argv: [AGENT.quiet, path.join(marks, "quiet")],
    flags: ["--idle", limit, "--wall", limit],
  });
  const c = await dispatch(ctx, homeC, {
    name: "chatty",
    backend: "codex",
    bin: AGENT.chatty,
    brief: "bench: chatty agent",
    env: [`BENCH_CHATTY_HZ=${CHATTY_HZ}`],
    flags: ["--idle", limit, "--wall", limit],
  });
  if (q.info === null || c.info === null)
    throw new Error(`dispatch failed: ${q.err}${q.out} ${c.err}${c.out}`);
  const quiet = q.info;
  const chatty = c.info;
  // coreutils timeout supervising the same agents.
  const tqId = `bench-timeout-quiet-${process.pid}`;
  const tcId = `bench-timeout-chatty-${process.pid}`;
  reaper.ownDispatch(tqId);
  reaper.ownDispatch(tcId);
  const tq = spawn("timeout", ["600", AGENT.quiet, path.join(marks, "timeout-quiet")], {
    stdio: "ignore",
    env: { ...BASE_ENV, CATHERD_DISPATCH: tqId },
  });
  const outFd = fs.openSync(path.join(scratch.root, "timeout-chatty.out"), "a");
  const tc = spawn("timeout", ["600", node, AGENT.chatty], {
    stdio: ["ignore", outFd, "ignore"],
    env: { ...BASE_ENV, CATHERD_DISPATCH: tcId, BENCH_CHATTY_HZ: String(CHATTY_HZ) },
  });
  fs.closeSync(outFd);
  // The floor of any node poller: a bare node doing what one idle poll must (stat both outputs, look for
  // cancel) every 250 ms, and one that only wakes up.
  /** @param {string} work */
  const floorScript = (work) =>
    `const fs=require('fs');const d=${JSON.stringify(quiet.dir)};setInterval(()=>{${work}},${POLL_MS})`;
  const statWork =
    "try{fs.statSync(d+'/events.jsonl')}catch{}try{fs.statSync(d+'/stderr.log')}catch{}fs.existsSync(d+'/cancel')";
  const floorStat = spawn(node, ["-e", floorScript(statWork)], { stdio: "ignore", env: BASE_ENV });
  const floorWake = spawn(node, ["-e", floorScript("")], { stdio: "ignore", env: BASE_ENV });
  // The floor of the supervisor's quiet schedule: its lock refresh (every 15 s) and safety poll (every 30 s).
  const floorQuiet = spawn(
    node,
    ["-e", "setInterval(()=>{},15000);setTimeout(()=>setInterval(()=>{},30000),7000)"],
    {
      stdio: "ignore",
      env: BASE_ENV,
    },
  );
  for (const child of [tq, floorQuiet, tc, floorStat, floorWake]) reaper.own(child.pid);
  /** @type {Record<Watched, number>} */
  const procs = {
    supQuiet: quiet.supervisorPid,
    supChatty: chatty.supervisorPid,
    timeoutQuiet: tq.pid ?? -1,
    timeoutChatty: tc.pid ?? -1,
    floorStat: floorStat.pid ?? -1,
    floorWake: floorWake.pid ?? -1,
    floorQuiet: floorQuiet.pid ?? -1,
  };
  await sleep(STEADY_WARM_SECS * 1000); // past start-up
  /** @type {Record<Watched, number[]>} */
  const rss = each(procs, () => []);
  const cpu0 = each(procs, cpuSecs);
  const sched0 = each(procs, schedSecs);
  /** @type {number[]} */
  const lag = [];
  const activityFile = path.join(chatty.dir, "activity.json");
  /** @type {string | null} */
  let lastAt = null;
  const t0 = performance.now();
  let nextMem = 0;
  while (performance.now() - t0 < STEADY_SECS * 1000) {
    const elapsed = performance.now() - t0;
    if (elapsed >= nextMem) {
      each(procs, (pid, k) => {
        const m = procMem(pid);
        if (m !== null) rss[k].push(m.rssKb / 1024);
      });
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
  const cpuPerMin = each(procs, (pid, k) => ((cpuSecs(pid) - cpu0[k]) / window) * 60);
  const pss = { supQuiet: procPssMiB(procs.supQuiet), supChatty: procPssMiB(procs.supChatty) };
  // Private memory beside an idle node (floorQuiet: alive all along, waking as rarely as a quiet
  // supervisor): read at one moment, so that the pages they share count as shared for all three.
  const priv = {
    supQuiet: procPrivate(procs.supQuiet),
    supChatty: procPrivate(procs.supChatty),
    idleNode: procPrivate(procs.floorQuiet),
  };
  const schedPerMin = each(procs, (pid, k) => ((schedSecs(pid) - sched0[k]) / window) * 60);
  const hwm = each(procs, (pid) => (procMem(pid)?.hwmKb ?? Number.NaN) / 1024);
  const eventsBytes = fs.statSync(path.join(chatty.dir, "events.jsonl")).size;
  report.extra.steady = {
    pssMiB: pss,
    privateMiB: priv,
    windowSecs: window,
    cpuSecsPerMin: cpuPerMin,
    schedstatCpuSecsPerMin: schedPerMin,
    hwmMiB: hwm,
    chattyBytesPerSec: eventsBytes / (window + 2),
    chattyHz: CHATTY_HZ,
  };
  // finish: cancel the dispatches, stop the timeouts (SIGTERM is passed to their agent)
  for (const t of [tq, tc, floorStat, floorWake, floorQuiet]) t.kill("SIGTERM");
  await finish(ctx, [quiet, chatty]);

  const peak = { name: "bare node peak", value: barePeak };
  /** @type {import("../lib/report.mjs").Target} */
  const memTarget = { text: "≤ 1.3× bare node peak", ok: (_s, ratio) => ratio !== null && ratio <= 1.3 };
  report.row({
    key: "steady.rss.quiet",
    what: "supervisor RSS, quiet agent (steady)",
    unit: "MiB",
    samples: rss.supQuiet,
    baseline: peak,
    target: memTarget,
    decimals: 1,
    note: `PSS at the end ${fmt(pss.supQuiet, 1)} MiB`,
  });
  report.row({
    key: "steady.hwm.quiet",
    what: "supervisor peak (VmHWM), quiet agent",
    unit: "MiB",
    samples: [hwm.supQuiet],
    baseline: peak,
    target: memTarget,
    decimals: 1,
  });
  report.row({
    key: "steady.rss.chatty",
    what: `supervisor RSS, chatty agent (${CHATTY_HZ * 2} lines/s)`,
    unit: "MiB",
    samples: rss.supChatty,
    baseline: peak,
    target: memTarget,
    decimals: 1,
  });
  report.row({
    key: "steady.hwm.chatty",
    what: "supervisor peak (VmHWM), chatty agent",
    unit: "MiB",
    samples: [hwm.supChatty],
    baseline: peak,
    target: memTarget,
    decimals: 1,
  });
  const idleUss = { name: "idle node USS", value: priv.idleNode.ussMiB };
  const idlePss = { name: "idle node PSS", value: priv.idleNode.pssMiB };
  report.row({
    key: "baseline.idleNode.uss",
    what: "baseline: idle node's private memory (USS: Private_Clean + Private_Dirty)",
    unit: "MiB",
    samples: [priv.idleNode.ussMiB],
    decimals: 1,
    note: `PSS ${fmt(priv.idleNode.pssMiB, 1)} MiB`,
  });
  report.row({
    key: "steady.uss.quiet",
    what: "supervisor private memory (USS), quiet agent, beside the idle node",
    unit: "MiB",
    samples: [priv.supQuiet.ussMiB],
    baseline: idleUss,
    target: { text: "≤ 1.5× idle node USS", ok: (_s, ratio) => ratio !== null && ratio <= 1.5 },
    decimals: 1,
  });
  report.row({
    key: "steady.uss.chatty",
    what: `supervisor private memory (USS), chatty agent (${CHATTY_HZ * 2} lines/s)`,
    unit: "MiB",
    samples: [priv.supChatty.ussMiB],
    baseline: idleUss,
    decimals: 1,
  });
  report.row({
    key: "steady.pss.quiet",
    what: "supervisor PSS, quiet agent",
    unit: "MiB",
    samples: [priv.supQuiet.pssMiB],
    baseline: idlePss,
    decimals: 1,
  });
  report.row({
    key: "steady.pss.chatty",
    what: "supervisor PSS, chatty agent",
    unit: "MiB",
    samples: [priv.supChatty.pssMiB],
    baseline: idlePss,
    decimals: 1,
  });
  report.row({
    key: "steady.rss.timeout",
    what: "baseline: coreutils timeout RSS, same agents",
    unit: "MiB",
    samples: [...rss.timeoutQuiet, ...rss.timeoutChatty],
    decimals: 1,
  });
  report.row({
    key: "steady.cpu.quiet",
    what: "supervisor CPU, quiet agent",
    unit: "s/min",
    samples: [cpuPerMin.supQuiet],
    baseline: { name: "timeout", value: cpuPerMin.timeoutQuiet },
    target: { text: "≤ 0.1 s/min at pollMs 250", ok: (s) => s.median <= 0.1 },
    decimals: 3,
    note: `resolution 1/${CLK_TCK} s over ${fmt(window)} s; schedstat: ${fmt(schedPerMin.supQuiet, 3)} s/min`,
  });
  report.row({
    key: "steady.cpu.floorStat",
    what: "baseline: bare node polling 250 ms (2 stat + 1 exists)",
    unit: "s/min",
    samples: [cpuPerMin.floorStat],
    decimals: 3,
    note: `schedstat: ${fmt(schedPerMin.floorStat, 3)} s/min`,
  });
  report.row({
    key: "steady.cpu.floorWake",
    what: "baseline: bare node waking every 250 ms, doing nothing",
    unit: "s/min",
    samples: [cpuPerMin.floorWake],
    decimals: 3,
    note: `schedstat: ${fmt(schedPerMin.floorWake, 3)} s/min`,
  });
  report.row({
    key: "steady.cpu.floorQuiet",
    what: "baseline: bare node waking as a quiet supervisor does (timers every 15 s and 30 s)",
    unit: "s/min",
    samples: [cpuPerMin.floorQuiet],
    decimals: 3,
    note: `schedstat: ${fmt(schedPerMin.floorQuiet, 3)} s/min`,
  });
  report.row({
    key: "steady.cpu.chatty",
    what: `supervisor CPU, chatty agent (${CHATTY_HZ * 2} lines/s)`,
    unit: "s/min",
    samples: [cpuPerMin.supChatty],
    baseline: { name: "timeout", value: cpuPerMin.timeoutChatty },
    decimals: 3,
  });
  report.row({
    key: "steady.lag",
    what: "ingestion lag: poll time − write time of the newest line parsed",
    unit: "ms",
    samples: lag,
    baseline: { name: "pollMs", value: POLL_MS },
    target: { text: `≤ one poll (${POLL_MS} ms)`, ok: (s) => s.p95 <= POLL_MS },
    note: "from activity.json (at most 1/s): its `at` is the poll's time, its lastEvent the newest stamp",
  });
}
