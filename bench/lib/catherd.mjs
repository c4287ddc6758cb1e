// @ts-check
// catherd as a user runs it, from the sections: dispatch, and finish what was dispatched.
import * as fs from "node:fs";
import * as path from "node:path";
import { BASE_ENV, CLI } from "./config.mjs";
import { timed } from "./spawn.mjs";
import { exists, readJson, waitFor } from "./wait.mjs";

/** @typedef {import("./context.mjs").BenchContext} BenchContext */
/** @typedef {import("./spawn.mjs").Timed} Timed */

/**
 * What `catherd dispatch --json` prints (specs/cli.md).
 * @typedef {{ run: string, name: string, dispatchId: string, dir: string, backend: string, admittedAt: string,
 *   supervisorPid: number }} Dispatched
 */
/** @typedef {Timed & { info: Dispatched | null }} DispatchResult */

/**
 * @typedef {object} DispatchOptions
 * @property {string} name
 * @property {string} [backend]   default exec
 * @property {string[]} [argv]    the command, for exec
 * @property {string[]} [flags]
 * @property {string} [bin]
 * @property {string} [brief]
 * @property {string[]} [env]     K=V pairs for --env
 */

/**
 * `catherd dispatch` on ctx.node, timed; its supervisor and its agent are owned by the reaper.
 * @param {BenchContext} ctx
 * @param {string} home
 * @param {DispatchOptions} options
 * @returns {Promise<DispatchResult>}
 */
export async function dispatch(
  ctx,
  home,
  { name, backend = "exec", argv = [], flags = [], bin, brief, env = [] },
) {
  const workDir = ctx.scratch.workDir;
  const args = [CLI, "dispatch", "--backend", backend, "--json", "--cwd", workDir, "--name", name, ...flags];
  if (bin !== undefined) args.push("--bin", bin);
  if (brief !== undefined) args.push("--brief", brief);
  for (const pair of env) args.push("--env", pair);
  if (backend === "exec") args.push("--", ...argv);
  const result = await timed(ctx.node, args, { env: { ...BASE_ENV, CATHERD_HOME: home }, cwd: workDir });
  /** @type {Dispatched | null} */
  let info = null;
  try {
    info = JSON.parse(result.out).dispatched ?? null;
  } catch {}
  if (info !== null) {
    ctx.reaper.ownDispatch(info.dispatchId);
    ctx.reaper.own(info.supervisorPid);
  }
  return { ...result, info };
}

/**
 * The dispatch's answer when it succeeded; else notes the failure (extra.dispatchFailures) and returns null,
 * so that the section skips that repetition, not the whole run.
 * @param {BenchContext} ctx
 * @param {string} section
 * @param {DispatchResult} r
 * @returns {Dispatched | null}
 */
export function succeeded(ctx, section, r) {
  if (r.info !== null && r.code === 0) return r.info;
  const message = `${r.err}${r.out}`.trim().split("\n").slice(0, 2).join(" / ");
  ctx.report.extra.dispatchFailures ??= [];
  ctx.report.extra.dispatchFailures.push({ section, code: r.code, message });
  console.log(`  ! ${section}: dispatch failed (exit ${r.code}): ${message}`);
  return null;
}

/**
 * Cancels what is still running, waits for every record, then reaps whatever is left.
 * @param {BenchContext} ctx
 * @param {(Dispatched | null)[]} infos
 * @param {number} [timeoutMs]
 * @returns {Promise<any[]>} each record.json (null where there is none)
 */
export async function finish(ctx, infos, timeoutMs = 30_000) {
  for (const info of infos) {
    if (info === null) continue;
    if (!exists(path.join(info.dir, "exit.json"))) {
      try {
        fs.writeFileSync(path.join(info.dir, "cancel"), `${new Date().toISOString()}\n`, { flag: "wx" });
      } catch {}
    }
  }
  const records = [];
  const deadline = performance.now() + timeoutMs;
  for (const info of infos) {
    if (info === null) {
      records.push(null);
      continue;
    }
    const file = path.join(info.dir, "record.json");
    await waitFor(() => exists(file), Math.max(0, deadline - performance.now()), 20);
    records.push(readJson(file));
  }
  ctx.reaper.reap(new Set(infos.flatMap((i) => (i === null ? [] : [i.dispatchId]))));
  return records;
}
