import { dismiss, type StandbySupervisor, startStandbySupervisor } from "./standby.js";

type StartStandby = (home: string) => StandbySupervisor | null;

/**
 * One standby supervisor kept ready by a dispatcher that lives on between dispatches (`catherd mcp`), so
 * that a dispatch waits for neither the standby's node start nor the loading of its claim: the dispatch
 * takes the one held, and once it has its answer the reserve holds another — the same one when it was not
 * given a folder (a refused or queued dispatch), else a new one, started then so that its start-up does
 * not compete with the dispatch it follows. A standby serves the home it was started for only. Its pipe
 * is the reserve's: when the dispatcher exits, however it exits, the held standby sees its stdin close and
 * exits without a trace (standby.ts), as any standby whose dispatcher went.
 */
export class StandbyReserve {
  #held: { home: string; standby: StandbySupervisor } | null = null;
  #closed = false;
  readonly #start: StartStandby;

  constructor(start: StartStandby = (home) => startStandbySupervisor(home)) {
    this.#start = start;
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
   * After the dispatch that took `standby`: hold it again if it got no folder, else hold a new one — unless
   * the reserve is closed or already holds one (two dispatches at once), when an unused one is dismissed.
   */
  refill(home: string, standby: StandbySupervisor | null): void {
    const unused = standby !== null && waiting(standby) ? standby : null;
    if (this.#closed || this.#held !== null) {
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
