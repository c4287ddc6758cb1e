import type { Clock } from "../../src/infra/clock.js";

/** Where every FakeClock's wall face starts unless told otherwise. */
export const FAKE_WALL_ZERO = Date.parse("2026-11-29T08:00:00Z");

export interface FakeClockOptions {
  /** The monotonic face at the start (ms). */
  mono?: number;
  /** The wall face at the start (ms since the epoch); FAKE_WALL_ZERO + mono by default. */
  wall?: number;
  /** Things that happen at monotonic times, run in time order while a sleep passes them. */
  events?: { at: number; happen: () => void }[];
  /** How far each face moves for a sleep of `ms` (a clock whose faces disagree); both `ms` by default. */
  monoStep?: (ms: number) => number;
  wallStep?: (ms: number) => number;
  /** Time stands still: a sleep ends only when its signal aborts (a wait answered by a real change alone). */
  frozen?: boolean;
  /**
   * Each event ends the sleep it falls in, at its time, as a watcher woken by the change it makes would
   * (a write the loop must read at once, not at its next poll).
   */
  wakeAtEvents?: boolean;
}

/**
 * The tests' one clock. Its sleeps jump time forward at once, running the events due on the way (in time
 * order; those of one time together, in the order given); an aborted signal cuts a sleep at the events that
 * aborted it, and with `wakeAtEvents` every event does. It records every sleep asked of it. Its two faces
 * move together unless steps say otherwise; a frozen one does not move at all.
 */
export class FakeClock implements Clock {
  mono: number;
  wall: number;
  readonly sleeps: number[] = [];
  private readonly events: { at: number; happen: () => void }[];
  private readonly monoStep: (ms: number) => number;
  private readonly wallStep: (ms: number) => number;
  private readonly frozen: boolean;
  private readonly wakeAtEvents: boolean;

  constructor(options: FakeClockOptions | { at: number; happen: () => void }[] = {}) {
    const o: FakeClockOptions = Array.isArray(options) ? { events: options } : options;
    this.mono = o.mono ?? 0;
    this.wall = o.wall ?? FAKE_WALL_ZERO + this.mono;
    this.events = [...(o.events ?? [])];
    this.monoStep = o.monoStep ?? ((ms) => ms);
    this.wallStep = o.wallStep ?? ((ms) => ms);
    this.frozen = o.frozen === true;
    this.wakeAtEvents = o.wakeAtEvents === true;
  }

  now(): number {
    return this.mono;
  }

  wallNow(): Date {
    return new Date(this.wall);
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (this.frozen) {
      await new Promise<void>((resolve) => {
        if (signal?.aborted === true) resolve();
        signal?.addEventListener("abort", () => resolve(), { once: true });
      });
      return;
    }
    const from = this.mono;
    const until = this.mono + this.monoStep(ms);
    for (;;) {
      const due = this.events.filter((e) => e.at > this.mono && e.at <= until);
      if (due.length === 0) break;
      const at = Math.min(...due.map((e) => e.at));
      const now = due.filter((e) => e.at === at);
      for (const event of now) this.events.splice(this.events.indexOf(event), 1);
      this.mono = at;
      for (const event of now) event.happen();
      if (signal?.aborted === true || this.wakeAtEvents) {
        this.wall += this.wallStep(this.mono - from);
        return;
      }
    }
    this.mono = until;
    this.wall += this.wallStep(ms);
  }
}
