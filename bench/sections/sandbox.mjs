// @ts-check
// The cost of the sandbox (specs/sandbox.md): a `--sandbox files+net` dispatch against the same dispatch
// without one, interleaved with `node -e ''` — its latency and its time to agent; then what a sandboxed
// dispatch costs per minute while its agent is quiet: the CPU and the private memory of everything it
// runs (supervisor, bubblewrap's monitor, the bridge's socat listeners, the agent), sandboxed and not.
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
export async function benchSandbox(ctx) {
  console.log("\n[sandbox] --sandbox files+net against no sandbox (exec backend, shell-script agent)");
  const home = ctx.scratch.home("sandbox");
  const marks = ctx.scratch.marks("sandbox");
  const sandboxed = ["--sandbox", "files+net", "--allow-write", marks];
  /** @type {number[]} */ const node = [];
  /** @type {Record<"open" | "sandboxed", { latency: number[], toAgent: number[] }>} */
  const runs = { open: { latency: [], toAgent: [] }, sandboxed: { latency: [], toAgent: [] } };
  /** @type {import("../lib/catherd.mjs").Dispatched[]} */
  const infos = [];
  for (let i = -REPS.warm; i < REPS.dispatch; i++) {
    const n = await timed(ctx.node, ["-e", ""]);
    for (const kind of /** @type {const} */ (["open", "sandboxed"])) {
      const mark = path.join(marks, `${kind}-${i}`);
      const r = await dispatch(ctx, home, {
        name: `${kind}-${i + REPS.warm}`,
        argv: [AGENT.markExit, mark],
        flags: ["--idle", "1m", "--wall", "1m", ...(kind === "sandboxed" ? sandboxed : [])],
      });
      const info = succeeded(ctx, `sandbox ${kind}`, r);
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
    key: "sandbox.latency",
    what: "sandboxed dispatch latency (`dispatch --sandbox files+net` until it returns)",
    unit: "ms",
    samples: runs.sandboxed.latency,
    baseline: base,
    note: `unsandboxed: median ${fmt(stats(runs.open.latency).median)} ms (the sandbox's own trial at admission is the difference)`,
  });
  report.row({
    key: "sandbox.timeToAgent",
    what: "sandboxed time to agent (dispatch invoked → agent's first instruction)",
    unit: "ms",
    samples: runs.sandboxed.toAgent,
    baseline: base,
    note: `unsandboxed: median ${fmt(stats(runs.open.toAgent).median)} ms`,
  });
  await benchSandboxPerMinute(ctx, home, marks, sandboxed);
}

/**
 * CPU (ms per minute) and private memory (USS, MiB) of every process of one quiet dispatch and of its
 * supervisor, over the steady window, sandboxed and not.
 * @param {import("../lib/context.mjs").BenchContext} ctx
 * @param {string} home
 * @param {string} marks
 * @param {string[]} sandboxed
 */
async function benchSandboxPerMinute(ctx, home, marks, sandboxed) {
  /** @type {Record<string, { cpu: number, uss: number, processes: number }>} */
  const seen = {};
  for (const kind of ["open", "sandboxed"]) {
    const r = await dispatch(ctx, home, {
      name: `steady-${kind}`,
      argv: [AGENT.quiet, path.join(marks, `steady-${kind}`)],
      flags: ["--idle", "10m", "--wall", "10m", ...(kind === "sandboxed" ? sandboxed : [])],
    });
    const info = succeeded(ctx, `sandbox steady ${kind}`, r);
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
  const closed = seen.sandboxed;
  if (open === undefined || closed === undefined) return;
  ctx.report.row({
    key: "sandbox.steady.cpu",
    what: "sandboxed quiet dispatch: CPU of all its processes per minute",
    unit: "ms",
    samples: [closed.cpu],
    baseline: { name: "unsandboxed", value: open.cpu },
    note: `${closed.processes} processes sandboxed, ${open.processes} not`,
  });
  ctx.report.row({
    key: "sandbox.steady.uss",
    what: "sandboxed quiet dispatch: private memory (USS) of all its processes",
    unit: "MiB",
    samples: [closed.uss],
    baseline: { name: "unsandboxed", value: open.uss },
    decimals: 1,
  });
}
