// @ts-check
// Admission with 0 and with 1000 recorded dispatches in the run, and with live ones: admit() in this
// process (on the bench's own node), then the whole CLI on ctx.node.
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { dispatch, finish, succeeded } from "../lib/catherd.mjs";
import { AGENT, BASE_ENV, DIST, REPS } from "../lib/config.mjs";
import { generateLive } from "../lib/generate.mjs";
import { fmt, stats } from "../lib/stats.mjs";
import { exists, waitFor } from "../lib/wait.mjs";

const LIVE_COUNT = 100;

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchAdmission(ctx) {
  console.log("\n[admission] admit() with 0 vs 1000 recorded dispatches in the run");
  const { validateDispatch } =
    /** @type {typeof import("../../src/dispatch/request/dispatch-request.js")} */ (
      await import(pathToFileURL(path.join(DIST, "src/dispatch/request/dispatch-request.js")).href)
    );
  const { admit } = /** @type {typeof import("../../src/dispatch/admission.js")} */ (
    await import(pathToFileURL(path.join(DIST, "src/dispatch/admission.js")).href)
  );
  const { systemClock } = /** @type {typeof import("../../src/infra/clock.js")} */ (
    await import(pathToFileURL(path.join(DIST, "src/infra/clock.js")).href)
  );
  const { report, scratch } = ctx;
  const home0 = scratch.home("admission-empty");
  const home1k = scratch.recordedHome(report.extra);
  /**
   * One admission, undone afterwards (it is never launched) so that the run keeps exactly its recorded
   * dispatches and no live one.
   * @param {string} home
   * @param {string} name
   */
  const admitOnce = async (home, name) => {
    const request = validateDispatch({
      backend: "exec",
      name,
      run: "default",
      cwd: scratch.workDir,
      env: [],
      brief: null,
      rest: [AGENT.quiet, "/dev/null"],
      environment: BASE_ENV,
    });
    const t = performance.now();
    const admitted = await admit(request, home, systemClock);
    const ms = performance.now() - t;
    fs.rmSync(path.join(home, "runs/default/live", `${admitted.dispatchId}.json`), { force: true });
    fs.rmSync(path.dirname(admitted.dir), { recursive: true, force: true });
    return ms;
  };
  /** @type {number[]} */ const zero = [];
  /** @type {number[]} */ const thousand = [];
  for (let i = -3; i < REPS.admit; i++) {
    const a = await admitOnce(home0, `adm-${i + 3}`);
    const b = await admitOnce(home1k, `adm-${i + 3}`);
    if (i < 0) continue;
    zero.push(a);
    thousand.push(b);
  }
  const z = stats(zero).median;
  report.row({
    key: "admission.inproc.0",
    what: "admit() in-process, 0 recorded",
    unit: "ms",
    samples: zero,
    decimals: 1,
  });
  report.row({
    key: "admission.inproc.1000",
    what: "admit() in-process, 1000 recorded",
    unit: "ms",
    samples: thousand,
    baseline: { name: "0 recorded", value: z },
    // Reading 1000 folders would cost tens of ms (see status): within 2 ms or 1.2× is noise, not growth.
    target: {
      text: "does not grow (≤ 1.2× or + 2 ms)",
      ok: (s, ratio) => (ratio !== null && ratio <= 1.2) || s.median - z <= 2,
    },
    decimals: 1,
  });
  // Live dispatches are inspected under the lock, one by one: the cost per live dispatch, which is what
  // grows when many are admitted at once (scale). Their supervisor.json names this (live) process.
  const homeLive = scratch.home("admission-live");
  generateLive(homeLive, LIVE_COUNT, { workDir: scratch.workDir, agent: AGENT.quiet });
  /** @type {number[]} */ const live = [];
  for (let i = -2; i < REPS.admit; i++) {
    const a = await admitOnce(homeLive, `adm-${i + 2}`);
    if (i >= 0) live.push(a);
  }
  report.row({
    key: `admission.inproc.live${LIVE_COUNT}`,
    what: `admit() in-process, ${LIVE_COUNT} live dispatches`,
    unit: "ms",
    samples: live,
    baseline: { name: "0 recorded", value: z },
    decimals: 1,
    note: `≈ ${fmt((stats(live).median - z) / LIVE_COUNT, 2)} ms per live dispatch, under the run's lock`,
  });
  // The whole CLI, interleaved.
  const marks = scratch.marks("admission");
  /** @type {number[]} */ const cli0 = [];
  /** @type {number[]} */ const cli1k = [];
  for (let i = -1; i < REPS.admitCli; i++) {
    /** @type {[string, number[]][]} */
    const homes = [
      [home0, cli0],
      [home1k, cli1k],
    ];
    for (const [home, into] of homes) {
      const r = await dispatch(ctx, home, {
        name: `cli-${i + 1}`,
        argv: [AGENT.markExit, path.join(marks, `m-${into === cli0 ? 0 : 1}-${i}`)],
        flags: ["--idle", "1m", "--wall", "1m"],
      });
      const info = succeeded(ctx, "admission.cli", r);
      if (info === null) continue;
      await waitFor(() => exists(path.join(info.dir, "record.json")), 10_000);
      await finish(ctx, [info]);
      if (i >= 0) into.push(r.ms);
    }
  }
  report.row({ key: "admission.cli.0", what: "catherd dispatch, 0 recorded", unit: "ms", samples: cli0 });
  report.row({
    key: "admission.cli.1000",
    what: "catherd dispatch, 1000 recorded",
    unit: "ms",
    samples: cli1k,
    baseline: { name: "0 recorded", value: stats(cli0).median },
    target: {
      text: "does not grow (≤ 1.2× of 0 recorded)",
      ok: (_s, ratio) => ratio !== null && ratio <= 1.2,
    },
  });
}
