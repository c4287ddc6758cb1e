// @ts-check
// Stop: a wall deadline → the whole group gone, for an agent that ignores SIGTERM.
import * as path from "node:path";
import { dispatch, finish, succeeded } from "../lib/catherd.mjs";
import { calibrate, mtimeMs, wallMs } from "../lib/clock.mjs";
import { AGENT, KILL_GRACE_MS, POLL_MS, REPS } from "../lib/config.mjs";
import { isAlive, pids, procStat } from "../lib/proc.mjs";
import { exists, readJson, sleep, waitFor } from "../lib/wait.mjs";

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchStop(ctx) {
  console.log(`\n[stop] wall deadline → group gone, agent ignores SIGTERM, --kill-grace ${KILL_GRACE_MS}ms`);
  const home = ctx.scratch.home("stop");
  const marks = ctx.scratch.marks("stop");
  /** @type {number[]} */ const gone = [];
  /** @type {number[]} */ const exitWritten = [];
  /** @type {number[]} */ const members = [];
  for (let i = -1; i < REPS.stop; i++) {
    const mark = path.join(marks, `stop-${i}`);
    const wall = 1000 + Math.floor(Math.random() * POLL_MS);
    const r = await dispatch(ctx, home, {
      name: `stop-${i + 1}`,
      argv: [AGENT.stubborn, mark],
      flags: ["--idle", "1m", "--wall", `${wall}ms`, "--kill-grace", `${KILL_GRACE_MS}ms`],
    });
    const info = succeeded(ctx, "stop", r);
    if (info === null) continue;
    const procFile = path.join(info.dir, "proc.json");
    await waitFor(() => exists(procFile) && exists(mark), 10_000);
    await sleep(200);
    const proc = readJson(procFile);
    const group = pids().flatMap((pid) => {
      const st = procStat(pid);
      return st !== null && st.pgid === proc.pgid ? [{ pid, startTime: st.startTime }] : [];
    });
    const deadline = Date.parse(proc.startedAt) + wall;
    calibrate();
    while (group.some(isAlive) && wallMs() < deadline + 10_000) await sleep(2);
    const goneAt = wallMs();
    const exitFile = path.join(info.dir, "exit.json");
    await waitFor(() => exists(exitFile), 10_000);
    if (i >= 0) {
      gone.push(goneAt - deadline);
      if (exists(exitFile)) exitWritten.push(mtimeMs(exitFile) - deadline);
      members.push(group.length);
    }
    await finish(ctx, [info]);
  }
  const { report } = ctx;
  report.extra.stopGroupMembers = members;
  const limit = KILL_GRACE_MS + POLL_MS + 50;
  report.row({
    key: "stop.groupGone",
    what: "stop: deadline → group gone (SIGTERM ignored)",
    unit: "ms",
    samples: gone,
    baseline: { name: "killGraceMs", value: KILL_GRACE_MS },
    target: { text: `≤ killGraceMs + pollMs + 50 ms (${limit} ms)`, ok: (s) => s.median <= limit },
  });
  report.row({
    key: "stop.exitWritten",
    what: "stop: deadline → exit.json",
    unit: "ms",
    samples: exitWritten,
    baseline: { name: "killGraceMs", value: KILL_GRACE_MS },
  });
}
