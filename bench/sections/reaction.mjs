// @ts-check
// Reaction: agent exit, a cancel file, a wall deadline → exit.json written (its mtime).
import * as fs from "node:fs";
import * as path from "node:path";
import { dispatch, finish, succeeded } from "../lib/catherd.mjs";
import { calibrate, markMs, mtimeMs, wallMs } from "../lib/clock.mjs";
import { AGENT, POLL_MS, REPS } from "../lib/config.mjs";
import { exists, readJson, sleep, waitFor } from "../lib/wait.mjs";

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchReaction(ctx) {
  console.log("\n[reaction] agent exit / cancel / wall deadline → exit.json (mtime)");
  const home = ctx.scratch.home("reaction");
  const marks = ctx.scratch.marks("reaction");
  /** @type {number[]} */ const onExit = [];
  /** @type {number[]} */ const onCancel = [];
  /** @type {number[]} */ const onDeadline = [];
  /** @type {{ exit: unknown[], cancel: unknown[], deadline: unknown[] }} */
  const reasons = { exit: [], cancel: [], deadline: [] };
  let k = 0;
  for (let i = -REPS.warm; i < REPS.reaction; i++) {
    const keep = i >= 0;
    // Agent exit: it sleeps 0.3–0.55 s, stamps its last instruction, exits.
    {
      const mark = path.join(marks, `exit-${k}`);
      const delay = (0.3 + Math.random() * 0.25).toFixed(3);
      const r = await dispatch(ctx, home, {
        name: `exit-${k++}`,
        argv: [AGENT.exitLater, mark, delay],
        flags: ["--idle", "1m", "--wall", "1m"],
      });
      const info = succeeded(ctx, "reaction.exit", r);
      if (info === null) continue;
      const exitFile = path.join(info.dir, "exit.json");
      await waitFor(() => exists(path.join(info.dir, "record.json")), 15_000);
      if (keep && exists(exitFile) && exists(mark)) {
        onExit.push(mtimeMs(exitFile) - markMs(mark));
        reasons.exit.push(readJson(exitFile)?.reason);
      }
      await finish(ctx, [info]);
    }
    // Cancel file, written at a random phase of the poll.
    {
      const mark = path.join(marks, `cancel-${k}`);
      const r = await dispatch(ctx, home, {
        name: `cancel-${k++}`,
        argv: [AGENT.quiet, mark],
        flags: ["--idle", "1m", "--wall", "1m"],
      });
      const info = succeeded(ctx, "reaction.cancel", r);
      if (info === null) continue;
      await waitFor(() => exists(path.join(info.dir, "proc.json")), 10_000);
      await sleep(300 + Math.random() * POLL_MS);
      calibrate();
      const t = wallMs();
      fs.writeFileSync(path.join(info.dir, "cancel"), `${new Date().toISOString()}\n`);
      const exitFile = path.join(info.dir, "exit.json");
      await waitFor(() => exists(exitFile), 10_000, 2);
      if (keep && exists(exitFile)) {
        onCancel.push(mtimeMs(exitFile) - t);
        reasons.cancel.push(readJson(exitFile)?.reason);
      }
      await finish(ctx, [info]);
    }
    // Wall deadline at a random phase of the poll: 1000–1250 ms.
    {
      const mark = path.join(marks, `deadline-${k}`);
      const wall = 1000 + Math.floor(Math.random() * POLL_MS);
      const r = await dispatch(ctx, home, {
        name: `deadline-${k++}`,
        argv: [AGENT.quiet, mark],
        flags: ["--idle", "1m", "--wall", `${wall}ms`],
      });
      const info = succeeded(ctx, "reaction.deadline", r);
      if (info === null) continue;
      const exitFile = path.join(info.dir, "exit.json");
      await waitFor(() => exists(exitFile), 15_000, 10);
      const proc = readJson(path.join(info.dir, "proc.json"));
      if (keep && exists(exitFile) && proc !== null) {
        onDeadline.push(mtimeMs(exitFile) - (Date.parse(proc.startedAt) + wall));
        reasons.deadline.push(readJson(exitFile)?.reason);
      }
      await finish(ctx, [info]);
    }
  }
  const { report } = ctx;
  report.extra.reactionReasons = reasons;
  /** @type {import("../lib/report.mjs").Target} */
  const target = {
    text: `≤ pollMs + 50 ms (${POLL_MS + 50} ms), median`,
    ok: (s) => s.median <= POLL_MS + 50,
  };
  const poll = { name: "pollMs", value: POLL_MS };
  report.row({
    key: "reaction.exit",
    what: "reaction: agent exit → exit.json",
    unit: "ms",
    samples: onExit,
    baseline: poll,
    target,
    note: "the supervisor wakes on the child's exit event",
  });
  report.row({
    key: "reaction.cancel",
    what: "reaction: cancel file → exit.json",
    unit: "ms",
    samples: onCancel,
    baseline: poll,
    target,
  });
  report.row({
    key: "reaction.deadline",
    what: "reaction: wall deadline → exit.json",
    unit: "ms",
    samples: onDeadline,
    baseline: poll,
    target,
    note: "deadline = proc.json startedAt + wallMs",
  });
}
