// @ts-check
// One timed child process.
import { spawn } from "node:child_process";
import { calibrate, wallMs } from "./clock.mjs";
import { BASE_ENV, ROOT } from "./config.mjs";
import { childCpuMs } from "./proc.mjs";

/**
 * @typedef {object} Timed
 * @property {number | null} code       exit code (-1 when it could not be spawned)
 * @property {NodeJS.Signals | null} signal
 * @property {number} ms               from just before spawn() to the exit event
 * @property {number} cpuMs            user + system of the child; valid when it ran alone
 * @property {string} out
 * @property {string} err
 * @property {number} t0w              realtime ms just before spawn()
 */

/**
 * Spawns `cmd` and waits for it, timing it.
 * @param {string} cmd
 * @param {readonly string[]} args
 * @param {{ env?: NodeJS.ProcessEnv, cwd?: string, stdin?: "ignore" | "pipe" }} [options]
 * @returns {Promise<Timed>}
 */
export function timed(cmd, args, { env = BASE_ENV, cwd = ROOT, stdin = "ignore" } = {}) {
  return new Promise((resolve) => {
    const cpu0 = childCpuMs();
    calibrate();
    const t0w = wallMs();
    const t0 = performance.now();
    /** @type {number | null} */
    let exitMs = null;
    let out = "";
    let err = "";
    const child = spawn(cmd, args, { env, cwd, stdio: [stdin, "pipe", "pipe"] });
    child.stdout?.on("data", (d) => {
      out += d;
    });
    child.stderr?.on("data", (d) => {
      err += d;
    });
    child.on("error", (error) =>
      resolve({ code: -1, signal: null, ms: Number.NaN, cpuMs: Number.NaN, out, err: String(error), t0w }),
    );
    child.on("exit", () => {
      exitMs = performance.now() - t0;
    });
    child.on("close", (code, signal) => {
      resolve({
        code,
        signal,
        ms: exitMs ?? performance.now() - t0,
        cpuMs: childCpuMs() - cpu0,
        out,
        err,
        t0w,
      });
    });
  });
}
