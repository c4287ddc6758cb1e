// @ts-check
// Where things are and what the environment asks of this bench run (bench/run.mjs lists the variables).
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** tsc's output, imported by the in-process sections. */
export const DIST = path.join(ROOT, "dist");
/** The bundled CLI, as `npm install -g` would run it. */
export const CLI = path.join(DIST, "bin/catherd.js");
const AGENTS = path.join(ROOT, "bench/agents");
/** The bench's agents (bench/agents/): each says what it stamps in its own header. */
export const AGENT = {
  markExit: path.join(AGENTS, "mark-exit.sh"),
  exitLater: path.join(AGENTS, "exit-later.sh"),
  quiet: path.join(AGENTS, "quiet.sh"),
  stubborn: path.join(AGENTS, "stubborn.sh"),
  chatty: path.join(AGENTS, "chatty.mjs"),
  spendOnce: path.join(AGENTS, "spend-once.sh"),
  /** Not an agent: the floor of a dispatch (a bare node starting a detached node that takes a folder). */
  floorDispatch: path.join(AGENTS, "floor-dispatch.mjs"),
};
/** Streams recorded from the real CLIs. */
export const RECORDED = path.join(ROOT, "test/fixtures/recorded");

const env = process.env;
export const QUICK = env.BENCH_QUICK === "1";
export const STEADY_SECS = Number(env.BENCH_STEADY_SECS ?? (QUICK ? 10 : 60));
// V8 compiles each code path on first use and its memory reducer runs two full collections ~8 s after
// start-up (~50 ms of CPU): one-time costs, not the steady state the window is about.
export const STEADY_WARM_SECS = Number(env.BENCH_STEADY_WARM ?? (QUICK ? 2 : 20));
export const INGEST_MB = Number(env.BENCH_INGEST_MB ?? 100);
export const CHATTY_HZ = Number(env.BENCH_CHATTY_HZ ?? 100);
export const SCALE = (env.BENCH_SCALE ?? "1,10,50,100").split(",").map(Number);
/** The sizes of the run-budget section's run, in live dispatches (the first is the others' baseline). */
export const RUN_BUDGET_LIVE = (env.BENCH_RUNBUDGET_LIVE ?? "1,10,50").split(",").map(Number);
export const ONLY = (env.BENCH_ONLY ?? "").split(",").filter((s) => s !== "");
export const KEEP = env.BENCH_KEEP === "1";
/** Repetitions after the warm-up, per measurement. */
export const REPS = QUICK
  ? { warm: 1, dispatch: 7, imports: 3, reaction: 6, stop: 3, ingest: 2, status: 5, admit: 10, admitCli: 3 }
  : {
      warm: 2,
      dispatch: 15,
      imports: 7,
      reaction: 12,
      stop: 6,
      ingest: 3,
      status: 12,
      admit: 30,
      admitCli: 6,
    };
/** The spec's poll, which `dispatch` always writes (SPEC_DEFAULTS.pollMs). */
export const POLL_MS = 250;
/** Kill grace of the stop test (--kill-grace). */
export const KILL_GRACE_MS = 1000;
/** Clock ticks per second of /proc's CPU times. */
export const CLK_TCK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** The environment every process we start gets: ours without catherd's variables or NODE_OPTIONS. */
export const BASE_ENV = Object.fromEntries(
  Object.entries(env).filter(([k]) => !k.startsWith("CATHERD_") && k !== "NODE_OPTIONS"),
);
