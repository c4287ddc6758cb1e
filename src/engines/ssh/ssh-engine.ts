import * as fs from "node:fs";
import * as os from "node:os";
import { CatherdError } from "../../domain/errors.js";
import type { PlacementFile } from "../../domain/schemas.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { writeFolderJson } from "../../folder/write.js";
import { sightOfLock } from "../../infra/lock-sight.js";
import { resolveExecutable } from "../../infra/which.js";
import type { Engine, EngineSight } from "../engine.js";
import { NOT_PLACED_FIX, sshError } from "./command.js";
import { checkHost } from "./host.js";
import { readinessOn } from "./readiness.js";
import { runningOn, terminateOn } from "./remote.js";
import { unsharedProblem } from "./shared.js";
import { sightOf, silentSight } from "./sight.js";
import { PLACED_ON_VARIABLE, startOverSsh } from "./start.js";

// SSH as a placement engine (specs/placement.md, "SSH"): `--placement ssh:HOST` starts the very supervisor
// program a local launch starts on HOST, over the user's own ssh, detached there. placement.json names
// the host as the user gave it (its `target`) and the supervisor's pid there (its `jobId`): cancel and
// later readers go through the user's ssh configuration again. What the engine knows of a supervisor is
// whether that pid there still runs that folder's supervisor; it never ends one by itself.

export const sshEngine: Engine = {
  name: "ssh",

  async unusable(where) {
    if (resolveExecutable("ssh", process.env.PATH ?? "") === null) {
      return new CatherdError(
        "E_ENGINE_MISSING",
        "cannot place the dispatch over ssh: ssh is not installed here",
        {
          fix: `install OpenSSH's client on this host (Debian: apt-get install openssh-client), ${NOT_PLACED_FIX}`,
        },
      );
    }
    if (where.target === null) {
      return new CatherdError("E_INPUT_INVALID", "--placement ssh names no host", {
        fix: "give --placement ssh:<host>",
      });
    }
    return unsharedProblem(checkHost(where.target), where.home);
  },

  async readiness(where, asked) {
    const host = where.target ?? "";
    try {
      checkHost(host);
    } catch (error) {
      const refusal = error as CatherdError;
      const check = { what: "host", ok: false, detail: refusal.message, fix: refusal.fix ?? null };
      return { host, checks: [check], problem: refusal, clis: [] };
    }
    return readinessOn(host, { home: where.home, ...asked });
  },

  async submit(dir, asked, command, clock) {
    const host = hostOf(asked.target);
    const { pid, node } = await startOverSsh({ host, dir, command, env: supervisorEnv(dir) });
    // The host's name as the supervisor there says it (nodeOfThisProcess): it may have come up before this
    // write and found no placement.json to note its node in.
    writeFolderJson(dir, FILES.placement, {
      engine: "ssh",
      target: host,
      jobId: String(pid),
      cluster: null,
      submittedAt: clock.wallNow().toISOString(),
      node,
    });
    return { engine: "ssh", jobId: String(pid), cluster: null, state: "running", reason: null, node: host };
  },

  async sights(placed) {
    const sights = new Map<string, EngineSight>();
    const byHost = new Map<string, [string, PlacementFile][]>();
    for (const [dir, placement] of placed) {
      const host = placement.target ?? "";
      byHost.set(host, [...(byHost.get(host) ?? []), [dir, placement]]);
    }
    await Promise.all(
      [...byHost].map(async ([host, list]) => {
        for (const [dir, sight] of await sightsOn(host, list)) sights.set(dir, sight);
      }),
    );
    return sights;
  },

  async cancel(placement, dir) {
    const host = hostOf(placement.target);
    const failed = await terminateOn(host, { pid: Number(placement.jobId), dir });
    if (failed !== null) throw sshError(failed, host, `stop the supervisor ${placement.jobId} on ${host}`);
  },

  isThisProcess(placement) {
    return process.env[PLACED_ON_VARIABLE] === placement.target && String(process.pid) === placement.jobId;
  },

  nodeOfThisProcess() {
    return os.hostname();
  },

  // The engine ends nothing by itself: a signal came from elsewhere (cancel writes the cancel file first).
  async endingOfThisProcess() {
    return null;
  },
};

/** The host of a placement, checked again before ssh is given it. */
function hostOf(target: string | undefined): string {
  return checkHost(target ?? "");
}

/** The variables a supervisor over ssh gets (sshd passes none): every CATHERD_* here, and the --pass-env names. */
function supervisorEnv(dir: string): Record<string, string> {
  const spec = readFolderJson(dir, FILES.spec);
  if (spec.kind !== "ok") {
    throw spec.kind === "missing"
      ? new CatherdError("E_SPEC_INVALID", `${fileIn(dir, FILES.spec)} is missing`)
      : spec.error;
  }
  const names = spec.value.passEnv ?? [];
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (name.startsWith("CATHERD_") || names.includes(name))) env[name] = value;
  }
  return env;
}

/** How long the supervisor of `dir` has given no sign: its lock's age, else the time since its submission. */
function silentFor(dir: string, placement: PlacementFile): number {
  const now = Date.now();
  const lock = sightOfLock(fileIn(dir, FILES.supervisorLock), now);
  return lock.kind === "held" ? lock.ageMs : now - Date.parse(placement.submittedAt);
}

/** What `host` says of each supervisor started there, by folder: one ssh call. */
async function sightsOn(
  host: string,
  list: readonly [string, PlacementFile][],
): Promise<[string, EngineSight][]> {
  let checked: string;
  try {
    checked = checkHost(host);
  } catch (error) {
    return list.map(([dir]) => [dir, { kind: "unreachable", error: error as CatherdError }]);
  }
  const running = await runningOn(
    checked,
    list.map(([dir, p]) => ({ pid: Number(p.jobId), dir })),
  );
  if (!Array.isArray(running)) {
    const error = sshError(running, checked, `ask ${checked} about its supervisors`);
    // ssh itself failed or timed out: the host may be gone. A remote command that failed proves nothing.
    const silent = running.failure !== "refused" && running.failure !== "missing";
    return list.map(([dir, p]) => [
      dir,
      silent
        ? silentSight({ host: checked, pid: p.jobId, silentMs: silentFor(dir, p), error })
        : { kind: "unreachable", error },
    ]);
  }
  return list.map(([dir, placement], i) => [
    dir,
    sightOf(checked, placement.jobId, {
      running: running[i] === true,
      cancelled: fs.existsSync(fileIn(dir, FILES.cancel)),
    }),
  ]);
}
