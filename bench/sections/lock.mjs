// @ts-check
// `catherd lock` (specs/lock.md): what it costs a command to run through a free slot, and how soon a
// waiter's command starts once the holder's command ends.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { BASE_ENV, CLI, REPS } from "../lib/config.mjs";
import { timed } from "../lib/spawn.mjs";
import { stats } from "../lib/stats.mjs";
import { waitFor } from "../lib/wait.mjs";

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchLock(ctx) {
  console.log("\n[lock] catherd lock -- /bin/true through a free slot; a holder's end to the next command");
  const { report, node } = ctx;
  const env = { ...BASE_ENV, CATHERD_HOME: ctx.scratch.home("lock"), CATHERD_LOCK_SLOTS: "1" };
  /** @type {number[]} */ const bare = [];
  /** @type {number[]} */ const free = [];
  /** @type {number[]} */ const handover = [];
  for (let i = -REPS.warm; i < REPS.reaction; i++) {
    const n = await timed(node, ["-e", ""]);
    const l = await timed(node, [CLI, "lock", "--", "/bin/true"], { env });
    if (l.code !== 0) throw new Error(`catherd lock -- /bin/true: exit ${l.code}: ${l.err}`);
    const h = await handoverMs(node, env, ctx.scratch.marks("lock"));
    if (i < 0) continue;
    bare.push(n.ms);
    free.push(l.ms);
    handover.push(h);
  }
  const base = { name: "node -e ''", value: stats(bare).median };
  report.row({
    key: "lock.free",
    what: "lock -- /bin/true, a free slot",
    unit: "ms",
    samples: free,
    baseline: base,
  });
  report.row({
    key: "lock.handover",
    what: "lock: holder's command ends → waiter's starts",
    unit: "ms",
    samples: handover,
    baseline: base,
    note: "the waiter next in line wakes on the queue's new version (fs.watch)",
  });
}

/**
 * A holder whose command waits for a file, a waiter queued behind it; the ms from the file's creation
 * (the holder's command then ends) to the waiter's command noting its start.
 * @param {string} node
 * @param {NodeJS.ProcessEnv} env
 * @param {string} dir
 */
async function handoverMs(node, env, dir) {
  const go = path.join(dir, "go");
  const held = path.join(dir, "held");
  const ran = path.join(dir, "ran");
  const holder = spawn(
    node,
    [CLI, "lock", "--", "/bin/sh", "-c", `: > '${held}'; while [ ! -e '${go}' ]; do sleep 0.005; done`],
    { env, stdio: "ignore" },
  );
  if ((await waitFor(() => fs.existsSync(held), 30_000)) === null) throw new Error("the holder never ran");
  let said = "";
  const waiter = spawn(node, [CLI, "lock", "--", "/bin/sh", "-c", `date +%s%N > '${ran}'`], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  waiter.stderr?.on("data", (d) => {
    said += d;
  });
  const ended = (/** @type {import("node:child_process").ChildProcess} */ child) =>
    new Promise((resolve) => child.once("exit", resolve));
  const done = Promise.all([ended(holder), ended(waiter)]);
  try {
    if ((await waitFor(() => said.includes("waiting"), 30_000)) === null) {
      throw new Error(`the waiter never queued behind the holder: ${said}`);
    }
    const at = Date.now();
    fs.writeFileSync(go, "");
    const line = await waitFor(() => (fs.existsSync(ran) ? fs.readFileSync(ran, "utf8").trim() : ""), 30_000);
    if (line === null) throw new Error("the waiter's command never ran");
    await done;
    return Number(line) / 1e6 - at;
  } finally {
    holder.kill("SIGKILL");
    waiter.kill("SIGKILL");
  }
}
