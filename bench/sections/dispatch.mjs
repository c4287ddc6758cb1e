// @ts-check
// Dispatch latency and time to agent (exec backend, shell-script agent), interleaved with `node -e ''` and
// a direct spawn of the same agent, so that background load hits both alike.
import * as fs from "node:fs";
import * as path from "node:path";
import { dispatch, finish, succeeded } from "../lib/catherd.mjs";
import { markMs, mtimeMs } from "../lib/clock.mjs";
import { AGENT, REPS } from "../lib/config.mjs";
import { timed } from "../lib/spawn.mjs";
import { fmt, stats } from "../lib/stats.mjs";
import { exists, waitFor } from "../lib/wait.mjs";

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchDispatch(ctx) {
  console.log("\n[dispatch] latency and time to agent (exec backend, shell-script agent)");
  const home = ctx.scratch.home("dispatch");
  const marks = ctx.scratch.marks("dispatch");
  /** @type {number[]} */ const node = [];
  /** @type {number[]} */ const nodeCpu = [];
  /** @type {number[]} */ const direct = [];
  /** @type {number[]} */ const directAgent = [];
  /** @type {number[]} */ const latency = [];
  /** @type {number[]} */ const latencyCpu = [];
  /** @type {number[]} */ const toAgent = [];
  /** @type {number[]} */ const toRecord = [];
  /** @type {import("../lib/catherd.mjs").Dispatched[]} */
  const infos = [];
  for (let i = -REPS.warm; i < REPS.dispatch; i++) {
    const keep = i >= 0;
    const n = await timed(ctx.node, ["-e", ""]);
    const dmark = path.join(marks, `direct-${i}`);
    const d = await timed(AGENT.markExit, [dmark]);
    const mark = path.join(marks, `dispatch-${i}`);
    const r = await dispatch(ctx, home, {
      name: `lat-${i + REPS.warm}`,
      argv: [AGENT.markExit, mark],
      flags: ["--idle", "1m", "--wall", "1m"],
    });
    const info = succeeded(ctx, "dispatch", r);
    if (info === null) continue;
    infos.push(info);
    const seen = await waitFor(() => exists(mark) && fs.statSync(mark).size > 0, 10_000);
    const recorded = await waitFor(() => exists(path.join(info.dir, "record.json")), 10_000);
    if (!keep) continue;
    node.push(n.ms);
    nodeCpu.push(n.cpuMs);
    direct.push(d.ms);
    directAgent.push(markMs(dmark) - d.t0w);
    latency.push(r.ms);
    latencyCpu.push(r.cpuMs);
    if (seen) toAgent.push(markMs(mark) - r.t0w);
    if (recorded) toRecord.push(mtimeMs(path.join(info.dir, "record.json")) - r.t0w);
  }
  await finish(ctx, infos);
  const nodeStart = stats(node).median;
  const { report } = ctx;
  report.row({
    key: "baseline.node",
    what: "baseline: `node -e ''` start to exit",
    unit: "ms",
    samples: node,
  });
  report.row({
    key: "baseline.directAgent",
    what: "baseline: spawn the agent directly, to its exit",
    unit: "ms",
    samples: direct,
    decimals: 1,
  });
  report.row({
    key: "dispatch.latency",
    what: "dispatch latency (`catherd dispatch` until it returns)",
    unit: "ms",
    samples: latency,
    baseline: { name: "node -e ''", value: nodeStart },
    target: { text: "≤ 2.5× bare node start", ok: (_s, ratio) => ratio !== null && ratio <= 2.5 },
    note: `direct spawn of the agent: median ${fmt(stats(direct).median, 1)} ms`,
  });
  report.row({
    key: "dispatch.cpu",
    what: "dispatch CPU (user+sys of the dispatch process)",
    unit: "ms",
    samples: latencyCpu,
    baseline: { name: "node -e '' CPU", value: stats(nodeCpu).median },
  });
  report.row({
    key: "baseline.directAgent.first",
    what: "baseline: time to agent, direct spawn",
    unit: "ms",
    samples: directAgent,
    decimals: 1,
  });
  report.row({
    key: "dispatch.timeToAgent",
    what: "time to agent (dispatch invoked → agent's first instruction)",
    unit: "ms",
    samples: toAgent,
    baseline: { name: "node -e ''", value: nodeStart },
    target: { text: "≤ 3× bare node start", ok: (_s, ratio) => ratio !== null && ratio <= 3 },
    note: `direct spawn: median ${fmt(stats(directAgent).median, 1)} ms`,
  });
  report.row({
    key: "dispatch.timeToRecord",
    what: "dispatch invoked → record.json (agent exits at once)",
    unit: "ms",
    samples: toRecord,
  });
}
