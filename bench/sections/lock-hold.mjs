// @ts-check
// How long a dispatch holds its run's admission lock while ten dead dispatches lie in the run, in a git
// repository: the lock is what every other dispatcher of the run waits on (specs/dispatch.md §2). The
// dead ones are real dispatches whose supervisors and agents were SIGKILLed; the new dispatch has a cap
// that makes admission read all of them. The lock's life is seen from outside, by fs.watch on the run
// folder in this (idle) process: `admission.lock` is a folder proper-lockfile creates and removes. The
// dispatch also records the dead ones where it finds them: its latency says what that costs it.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { AGENT, BASE_ENV, CLI, REPS } from "../lib/config.mjs";
import { isAlive, procStat } from "../lib/proc.mjs";
import { timed } from "../lib/spawn.mjs";
import { readJson, waitFor } from "../lib/wait.mjs";

const DEAD = 10;

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchLockHold(ctx) {
  console.log(`\n[lockhold] the admission lock's hold time with ${DEAD} dead dispatches in a git repository`);
  const repo = gitRepository(ctx.scratch.marks("lockhold-repo"));
  /** @type {number[]} */ const held = [];
  /** @type {number[]} */ const latency = [];
  for (let i = -1; i < REPS.admitCli; i++) {
    const home = ctx.scratch.home("lockhold");
    await deadDispatches(ctx, home, repo);
    const runDir = path.join(home, "runs", "default");
    const watch = watchLock(runDir);
    const r = await timed(
      ctx.node,
      [
        CLI,
        "dispatch",
        "--backend",
        "exec",
        "--json",
        "--cwd",
        repo,
        "--name",
        "newcomer",
        "--max-parallel",
        String(DEAD),
        "--",
        AGENT.markExit,
        "/dev/null",
      ],
      { env: { ...BASE_ENV, CATHERD_HOME: home }, cwd: repo },
    );
    const spans = watch.stop();
    const info = r.code === 0 ? JSON.parse(r.out).dispatched : null;
    if (info !== null) {
      ctx.reaper.ownDispatch(info.dispatchId);
      await waitFor(() => fs.existsSync(path.join(info.dir, "record.json")), 30_000);
    }
    if (i < 0 || info === null || spans.length === 0) continue;
    held.push(Math.max(...spans));
    latency.push(r.ms);
  }
  ctx.report.row({
    key: "admission.lockhold.dead10",
    what: `admission lock held, ${DEAD} dead dispatches in a git repository`,
    unit: "ms",
    samples: held,
    decimals: 1,
    note: "the longest hold of the dispatch (admission, and any promotion it does)",
  });
  ctx.report.row({
    key: "admission.cli.dead10",
    what: `catherd dispatch, ${DEAD} dead dispatches in a git repository`,
    unit: "ms",
    samples: latency,
  });
}

/**
 * A git repository with a few files and one commit, where the dispatches work (their records snapshot it).
 * @param {string} dir
 */
function gitRepository(dir) {
  const git = (/** @type {string[]} */ ...args) =>
    execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@localhost", ...args], {
      cwd: dir,
      stdio: "ignore",
    });
  git("init", "-q");
  for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(dir, `file-${i}.txt`), `line ${i}\n`.repeat(100));
  git("add", "-A");
  git("commit", "-q", "-m", "bench");
  return dir;
}

/**
 * Dispatches DEAD agents that sleep, then SIGKILLs each supervisor and agent (by pid and start time, all
 * ours): their folders are `lost`, not yet recorded.
 * @param {import("../lib/context.mjs").BenchContext} ctx
 * @param {string} home
 * @param {string} repo
 */
async function deadDispatches(ctx, home, repo) {
  for (let n = 0; n < DEAD; n++) {
    const r = await timed(
      ctx.node,
      [
        CLI,
        "dispatch",
        "--backend",
        "exec",
        "--json",
        "--cwd",
        repo,
        "--name",
        `dead-${n}`,
        "--",
        "sleep",
        "300",
      ],
      { env: { ...BASE_ENV, CATHERD_HOME: home }, cwd: repo },
    );
    if (r.code !== 0) throw new Error(`dispatch dead-${n}: ${r.err}`);
    const info = JSON.parse(r.out).dispatched;
    ctx.reaper.ownDispatch(info.dispatchId);
    const proc = await waitFor(() => readJson(path.join(info.dir, "proc.json")), 10_000);
    for (const pid of [info.supervisorPid, proc?.pid]) {
      const st = typeof pid === "number" ? procStat(pid) : null;
      if (st !== null) process.kill(pid, "SIGKILL");
      if (st !== null) await waitFor(() => !isAlive({ pid, startTime: st.startTime }) || undefined, 5000);
    }
  }
}

/**
 * Watches `<runDir>/admission.lock` appear and go; `stop` returns each span it lived, in ms.
 * @param {string} runDir
 */
function watchLock(runDir) {
  /** @type {number[]} */ const spans = [];
  /** @type {number | null} */ let since = null;
  // Created, then removed: each a `rename` of the entry, read at once by this idle process (looking for the
  // folder when the event is handled would miss a short hold whose two events are read together).
  const watcher = fs.watch(runDir, (event, name) => {
    if (name !== "admission.lock" || event !== "rename") return;
    const now = performance.now();
    if (since === null) since = now;
    else {
      spans.push(now - since);
      since = null;
    }
  });
  return {
    stop() {
      watcher.close();
      return spans;
    },
  };
}
