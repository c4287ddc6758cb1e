import type { Crossing } from "../src/domain/spend/budget.js";
import type { ErrorKind, ExitReason } from "../src/domain/vocab.js";
import type { DiskFull } from "../src/domain/watch/disk.js";
import { sleepFor } from "../src/domain/watch/next-look.js";
import type { PollSignals } from "../src/domain/watch/watch.js";
import type { Clock } from "../src/infra/clock.js";

// The watch loop's shape (specs/supervisor.md, "The loop"): at each poll every sensor looks in turn and
// says what it saw and when it next needs a look; the rules judge what the poll saw; the loop sleeps until
// the earliest next look (sleepFor, src/domain/watch/next-look.ts), or until news cuts the sleep short.

/** How the watch ends: the exit reason and what goes with it. */
export interface Stop {
  reason: ExitReason;
  /** The kind the provider's words gave the stop (decide's verdict), or null. */
  errorKind: ErrorKind | null;
  /** For a `budget` stop: the cap reached and what was used of it. */
  budget: Crossing | null;
  /** For a stop on a full disk (reason supervisor-error, kind disk): the file system and its refusal. */
  disk: DiskFull | null;
}

/** What one look saw. */
export interface Sight {
  /** Facts for the rules (`decide`'s signals) that this sensor knows; the poll's other facts stand. */
  saw?: Partial<PollSignals>;
  /** An action: the watch ends now, before later sensors look and before the rules judge. */
  stop?: Stop;
  /** When it next needs a look though nothing else happens (monotonic ms); Infinity: news alone. */
  nextLookAt: number;
}

export interface Sensor {
  /** Looks at `now`; `seen` is what the poll's earlier sensors saw. A throw ends the watch. */
  look(now: number, seen: Readonly<PollSignals>): Sight | Promise<Sight>;
}

/** A sensor that saw nothing for the rules and needs no look of its own. */
export const NOTHING: Sight = Object.freeze({ nextLookAt: Number.POSITIVE_INFINITY });

/** The rules, after every sensor of a poll looked. */
export interface Rules {
  /** Judges what the poll saw at `now`: a stop, or null to go on. */
  judge(seen: PollSignals, now: number): Stop | null;
  /** When the rules can change their mind without news (monotonic ms), after the last judgement. */
  nextLookAt(seen: PollSignals): number;
}

export interface Looks {
  clock: Clock;
  /** In the order they look: a later one may need what an earlier one saw. */
  sensors: readonly Sensor[];
  rules: Rules;
  /** Sleeps `ms`, or less when news comes (news.ts). */
  sleep(ms: number): Promise<void>;
}

/** Polls until a sensor or the rules stop the watch: the stop, and the time of the poll that made it. */
export async function lookUntilStop(looks: Looks): Promise<{ stop: Stop; at: number }> {
  const { clock, sensors, rules } = looks;
  const nextLooks = new Array<number>(sensors.length + 1);
  for (;;) {
    const now = clock.now();
    const seen: PollSignals = { exited: false, cancelRequested: false };
    let i = 0;
    for (const sensor of sensors) {
      // A sensor that answers at once is not awaited: a poll costs no promise per sensor.
      const looked = sensor.look(now, seen);
      const sight = looked instanceof Promise ? await looked : looked;
      if (sight.stop !== undefined) return { stop: sight.stop, at: now };
      if (sight.saw !== undefined) Object.assign(seen, sight.saw);
      nextLooks[i++] = sight.nextLookAt;
    }
    const stop = rules.judge(seen, now);
    if (stop !== null) return { stop, at: now };
    nextLooks[sensors.length] = rules.nextLookAt(seen);
    await looks.sleep(sleepFor(nextLooks, clock.now()));
  }
}
