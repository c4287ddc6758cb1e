// @ts-check
// What the bench started, reaped on every path: supervisors and helpers by pid + start time, agents by the
// CATHERD_DISPATCH=<id> of their environment. Never by name.
import { dispatchVariables, isAlive, procStat } from "./proc.mjs";

export class Reaper {
  /** Processes we own: pid → start time. @type {Map<number, string>} */
  #owned = new Map();
  /** Every CATHERD_DISPATCH value our agents carry. @type {Set<string>} */
  #dispatchIds = new Set();

  /**
   * Owns a process we started (read its start time now, while it is surely ours).
   * @param {number | undefined} pid
   */
  own(pid) {
    if (pid === undefined) return;
    const st = procStat(pid);
    if (st !== null) this.#owned.set(pid, st.startTime);
  }

  /**
   * Owns every process that carries CATHERD_DISPATCH=<id>.
   * @param {string} id
   */
  ownDispatch(id) {
    this.#dispatchIds.add(id);
  }

  /**
   * SIGKILLs what is still alive of what we own and of the given dispatches (default: all of ours).
   * @param {ReadonlySet<string>} [ids]
   * @returns {number} how many processes it signalled
   */
  reap(ids = this.#dispatchIds) {
    let killed = 0;
    for (const [pid, startTime] of this.#owned) {
      if (isAlive({ pid, startTime })) {
        try {
          process.kill(pid, "SIGKILL");
          killed += 1;
        } catch {}
      }
      if (!isAlive({ pid, startTime })) this.#owned.delete(pid);
    }
    for (const [pid, id] of dispatchVariables()) {
      if (!ids.has(id)) continue;
      try {
        process.kill(pid, "SIGKILL");
        killed += 1;
      } catch {}
    }
    return killed;
  }
}
