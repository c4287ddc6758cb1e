// @ts-check
// The read side: `catherd status` over 1000 recorded dispatches (folders written directly).
import { BASE_ENV, CLI, REPS } from "../lib/config.mjs";
import { timed } from "../lib/spawn.mjs";
import { stats } from "../lib/stats.mjs";

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchRead(ctx) {
  console.log("\n[read] catherd status over 1000 recorded dispatches (folders written directly)");
  const { report, node } = ctx;
  const home = ctx.scratch.recordedHome(report.extra);
  const env = { ...BASE_ENV, CATHERD_HOME: home };
  /** @type {number[]} */ const json = [];
  /** @type {number[]} */ const all = [];
  /** @type {number[]} */ const text = [];
  /** @type {number[]} */ const bare = [];
  let checked = false;
  for (let i = -REPS.warm; i < REPS.status; i++) {
    const n = await timed(node, ["-e", ""]);
    const a = await timed(node, [CLI, "status", "--json"], { env });
    const b = await timed(node, [CLI, "status", "--all", "--json"], { env });
    const c = await timed(node, [CLI, "status"], { env });
    if (!checked) {
      /** @type {{ state: string, problems: unknown[] }[]} */
      const rowsSeen = JSON.parse(a.out).dispatches;
      const bad = rowsSeen.filter((r) => r.state !== "recorded" || r.problems.length > 0);
      if (rowsSeen.length !== 1000 || bad.length > 0) {
        throw new Error(
          `status saw ${rowsSeen.length} rows, ${bad.length} not cleanly recorded: ${JSON.stringify(bad[0])}`,
        );
      }
      report.extra.statusJsonBytes = a.out.length;
      checked = true;
    }
    if (i < 0) continue;
    bare.push(n.ms);
    json.push(a.ms);
    all.push(b.ms);
    text.push(c.ms);
  }
  const base = { name: "node -e ''", value: stats(bare).median };
  /** @type {import("../lib/report.mjs").Target} */
  const target = { text: "≤ 300 ms", ok: (s) => s.median <= 300 };
  report.row({
    key: "read.statusJson",
    what: "status --json, 1000 recorded",
    unit: "ms",
    samples: json,
    baseline: base,
    target,
  });
  report.row({
    key: "read.statusAllJson",
    what: "status --all --json, 1000 recorded",
    unit: "ms",
    samples: all,
    baseline: base,
    target,
  });
  report.row({
    key: "read.statusText",
    what: "status (80-column text), 1000 recorded",
    unit: "ms",
    samples: text,
    baseline: base,
    target,
  });
}
