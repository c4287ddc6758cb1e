// @ts-check
// The cost of the fence (specs/sandbox.md): a `--sandbox files+net` dispatch against the same dispatch
// without one, interleaved with `node -e ''` — its latency and its time to agent; then what a fenced
// dispatch costs per minute while its agent is quiet: the CPU and the private memory of everything it
// runs (supervisor, bubblewrap's monitor, the bridge's socat listeners, the agent), fenced and not.
import * as fs from "node:fs";
import * as path from "node:path";
import { dispatch, finish, succeeded } from "../lib/catherd.mjs";
import { markMs } from "../lib/clock.mjs";
import { AGENT, REPS, STEADY_SECS, STEADY_WARM_SECS } from "../lib/config.mjs";
import { cpuSecs, dispatchVariables, procPrivate } from "../lib/proc.mjs";
import { timed } from "../lib/spawn.mjs";
import { fmt, stats } from "../lib/stats.mjs";
import { exists, sleep, waitFor } from "../lib/wait.mjs";

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchFence(ctx) {
  console.log("\n[fence] --sandbox files+net against no fence (exec backend, shell-script agent)");
  const home = ctx.scratch.home("fence");
  const marks = ctx.scratch.marks("fence");
  const fenced = ["--sandbox", "files+net", "--allow-write", marks];
  /** @type {number[]} */ const node = [];
  /** @type {Record<"open" | "fenced", { latency: number[], toAgent: number[] }>} */
  const runs = { open: { latency: [], toAgent: [] }, fenced: { latency: [], toAgent: [] } };
  /** @type {import("../lib/catherd.mjs").Dispatched[]} */
  const infos = [];
  for (let i = -REPS.warm; i < REPS.dispatch; i++) {
    const n = await timed(ctx.node, ["-e", ""]);
    for (const kind of /** @type {const} */ (["open", "fenced"])) {
      const mark = path.join(marks, `${kind}-${i}`);
      const r = await dispatch(ctx, home, {
        name: `${kind}-${i + REPS.warm}`,
        argv: [AGENT.markExit, mark],
        flags: ["--idle", "1m", "--wall", "1m", ...(kind === "fenced" ? fenced : [])],
      });
      const info = succeeded(ctx, `fence ${kind}`, r);
      if (info === null) continue;
      infos.push(info);
      const seen = await waitFor(() => exists(mark) && fs.statSync(mark).size > 0, 10_000);
      await waitFor(() => exists(path.join(info.dir, "record.json")), 10_000);
      if (i < 0) continue;
      runs[kind].latency.push(r.ms);
      if (seen) runs[kind].toAgent.push(markMs(mark) - r.t0w);
    }
    if (i >= 0) node.push(n.ms);
  }
  await finish(ctx, infos);
  const nodeStart = stats(node).median;
  const base = { name: "node -e ''", value: nodeStart };
  const { report } = ctx;
  report.row({
    key: "fence.latency",
    what: "fenced dispatch latency (`dispatch --sandbox files+net` until it returns)",
    unit: "ms",
    samples: runs.fenced.latency,
    baseline: base,
    note: `unfenced: median ${fmt(stats(runs.open.latency).median)} ms (the fence's own trial at admission is the difference)`,
  });
  report.row({
    key: "fence.timeToAgent",
    what: "fenced time to agent (dispatch invoked → agent's first instruction)",
    unit: "ms",
    samples: runs.fenced.toAgent,
    baseline: base,
    note: `unfenced: median ${fmt(stats(runs.open.toAgent).median)} ms`,
  });
  await benchFencePerMinute(ctx, home, marks, fenced);
}

/**
 * CPU (ms per minute) and private memory (USS, MiB) of every process of one quiet dispatch and of its
 * supervisor, over the steady window, fenced and not.
 * @param {import("../lib/context.mjs").BenchContext} ctx
 * @param {string} home
 * @param {string} marks
 * @param {string[]} fenced
 */
async function benchFencePerMinute(ctx, home, marks, fenced) {
  /** @type {Record<string, { cpu: number, uss: number, processes: number }>} */
  const seen = {};
  for (const kind of ["open", "fenced"]) {
    const r = await dispatch(ctx, home, {
      name: `steady-${kind}`,
      argv: [AGENT.quiet, path.join(marks, `steady-${kind}`)],
      flags: ["--idle", "10m", "--wall", "10m", ...(kind === "fenced" ? fenced : [])],
    });
    const info = succeeded(ctx, `fence steady ${kind}`, r);
    if (info === null) continue;
    await waitFor(() => exists(path.join(info.dir, "proc.json")), 10_000);
    await sleep(STEADY_WARM_SECS * 1000);
    const members = () => [
      info.supervisorPid,
      ...[...dispatchVariables()].filter(([, id]) => id === info.dispatchId).map(([pid]) => pid),
    ];
    const cpu = () => members().reduce((sum, pid) => sum + (cpuSecs(pid) || 0), 0);
    const before = cpu();
    await sleep(STEADY_SECS * 1000);
    const used = cpu() - before;
    const pids = members();
    const uss = pids.reduce((sum, pid) => sum + (procPrivate(pid).ussMiB || 0), 0);
    seen[kind] = { cpu: (used * 1000 * 60) / STEADY_SECS, uss, processes: pids.length };
    await finish(ctx, [info]);
  }
  const open = seen.open;
  const closed = seen.fenced;
  if (open === undefined || closed === undefined) return;
  ctx.report.row({
    key: "fence.steady.cpu",
    what: "fenced quiet dispatch: CPU of all its processes per minute",
    unit: "ms",
    samples: [closed.cpu],
    baseline: { name: "unfenced", value: open.cpu },
    note: `${closed.processes} processes fenced, ${open.processes} not`,
  });
  ctx.report.row({
    key: "fence.steady.uss",
    what: "fenced quiet dispatch: private memory (USS) of all its processes",
    unit: "MiB",
    samples: [closed.uss],
    baseline: { name: "unfenced", value: open.uss },
    decimals: 1,
  });
}
