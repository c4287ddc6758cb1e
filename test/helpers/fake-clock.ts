import type { Clock } from "../../src/infra/clock.js";

/**
 * A clock whose sleeps jump time forward at once, running the events due on the way (in time order); an
 * aborted signal cuts a sleep at the event that aborted it. It records every sleep asked of it.
 */
export class FakeClock implements Clock {
  mono = 0;
  readonly sleeps: number[] = [];
  private readonly events: { at: number; happen: () => void }[];

  constructor(events: { at: number; happen: () => void }[] = []) {
    this.events = [...events];
  }

  now(): number {
    return this.mono;
  }

  wallNow(): Date {
    return new Date(Date.parse("2026-11-29T08:00:00Z") + this.mono);
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    const until = this.mono + ms;
    for (;;) {
      const next = this.events
        .filter((e) => e.at > this.mono && e.at <= until)
        .sort((a, b) => a.at - b.at)[0];
      if (next === undefined) break;
      this.events.splice(this.events.indexOf(next), 1);
      this.mono = next.at;
      next.happen();
      if (signal?.aborted === true) return;
    }
    this.mono = until;
  }
}
