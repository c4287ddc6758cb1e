import { dismiss, type StandbySupervisor, startStandbySupervisor } from "./standby.js";

type StartStandby = (home: string) => StandbySupervisor | null;

/**
 * The one owner of a dispatcher's standby supervisors (specs/supervisor.md, "How a supervisor starts"):
 * every dispatcher — the command line, `catherd mcp`, the promoter, a use case called without one — starts
 * them through a reserve and hands each back to it, and only the reserve dismisses one. A dispatch takes
 * the standby held (or one started then) and hands it back once it has its answer. A reserve that `keeps`
 * (`catherd mcp`, which lives on between dispatches) then holds another — the same one when it was not
 * given a folder (a refused or queued dispatch), else a new one, started then so that its start-up does
 * not compete with the dispatch it follows; one that does not keep dismisses it. A standby serves the home
 * it was started for only. Its pipe is the reserve's: when the dispatcher exits, however it exits, the
 * held standby sees its stdin close and exits without a trace (standby.ts).
 */
export class StandbyReserve {
  #held: { home: string; standby: StandbySupervisor } | null = null;
  #closed = false;
  readonly #start: StartStandby;
  readonly #keeps: boolean;

  constructor({
    keeps = false,
    start = (home) => startStandbySupervisor(home),
  }: { keeps?: boolean; start?: StartStandby } = {}) {
    this.#keeps = keeps;
    this.#start = start;
  }

  /** Starts one for `home` now, unless one is held: its start-up then overlaps what the dispatcher does next. */
  prime(home: string): void {
    if (this.#held !== null || this.#closed) return;
    const started = this.#start(home);
    this.#held = started === null ? null : { home, standby: started };
  }

  /**
   * The standby for one dispatch in `home`: the one held, if it serves that home and still waits, else a
   * new one (null when none can be started: the dispatch then starts its supervisor after admission).
   * Hand it back with `refill` when the dispatch has its answer.
   */
  take(home: string): StandbySupervisor | null {
    const held = this.#held;
    this.#held = null;
    if (held !== null && held.home === home && waiting(held.standby)) return held.standby;
    if (held !== null) dismiss(held.standby);
    return this.#closed ? null : this.#start(home);
  }

  /**
   * After the dispatch that took `standby`: a reserve that keeps holds it again if it got no folder, else
   * a new one — unless it is closed or already holds one (two dispatches at once); an unused one not held
   * is dismissed.
   */
  refill(home: string, standby: StandbySupervisor | null): void {
    const unused = standby !== null && waiting(standby) ? standby : null;
    if (!this.#keeps || this.#closed || this.#held !== null) {
      if (unused !== null) dismiss(unused);
      return;
    }
    const next = unused ?? this.#start(home);
    this.#held = next === null ? null : { home, standby: next };
  }

  /** Dismisses the standby held, and holds none from now on. */
  close(): void {
    this.#closed = true;
    if (this.#held !== null) dismiss(this.#held.standby);
    this.#held = null;
  }
}

/** Not given a folder, and neither failed to start nor ended: still waiting on its pipe. */
function waiting(standby: StandbySupervisor): boolean {
  return !standby.given && standby.ended() === null && standby.child.stdin?.writable === true;
}
