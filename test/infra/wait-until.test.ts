import { EventEmitter } from "node:events";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  type WaitOptions,
  type WakeSource,
  waitUntil,
  wakeOnEvents,
  wakeWhenSettled,
  watchFolders,
} from "../../src/infra/wait-until.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { tempDir } from "../helpers/folders.js";

// waitUntil on a fake clock: time moves only when the wait sleeps, and things happen at the times a case
// gives (the answer becoming ready, a change reported by the watch). No real time decides a result.

/** A watch driven by the test: `wake()` reports a change; it counts how often it was closed. */
function fakeWatch() {
  const source = { wake: () => {}, closed: 0, listening: false };
  const watch: WakeSource = (wake) => {
    source.wake = wake;
    source.listening = true;
    return () => {
      source.closed += 1;
      source.listening = false;
    };
  };
  return { source, watch };
}

interface Case {
  title: string;
  pollMs: WaitOptions["pollMs"];
  deadline: number;
  /** From this time on the check answers "ready". */
  answerAt: number;
  /** Times at which the watch reports a change. */
  wakes?: number[];
  expected: { answer: string | undefined; at: number; sleeps: number[]; checks: number[] };
}

const NEVER = Number.POSITIVE_INFINITY;

const CASES: Case[] = [
  {
    title: "answers at once without sleeping when the check is ready",
    pollMs: 100,
    deadline: 1000,
    answerAt: 0,
    expected: { answer: "ready", at: 0, sleeps: [], checks: [0] },
  },
  {
    title: "polls every pollMs until the check answers",
    pollMs: 100,
    deadline: 1000,
    answerAt: 250,
    expected: { answer: "ready", at: 300, sleeps: [100, 100, 100], checks: [0, 100, 200, 300] },
  },
  {
    title: "gives up at the deadline, after one last check there, never sleeping past it",
    pollMs: 300,
    deadline: 1000,
    answerAt: NEVER,
    expected: { answer: undefined, at: 1000, sleeps: [300, 300, 300, 100], checks: [0, 300, 600, 900, 1000] },
  },
  {
    title: "takes an answer that came during the last sleep before the deadline",
    pollMs: 300,
    deadline: 1000,
    answerAt: 950,
    expected: { answer: "ready", at: 1000, sleeps: [300, 300, 300, 100], checks: [0, 300, 600, 900, 1000] },
  },
  {
    title: "checks once and gives up when the deadline has already passed",
    pollMs: 100,
    deadline: -5,
    answerAt: NEVER,
    expected: { answer: undefined, at: 0, sleeps: [], checks: [0] },
  },
  {
    title: "waits for ever with an infinite deadline",
    pollMs: 1000,
    deadline: NEVER,
    answerAt: 4500,
    expected: {
      answer: "ready",
      at: 5000,
      sleeps: [1000, 1000, 1000, 1000, 1000],
      checks: [0, 1000, 2000, 3000, 4000, 5000],
    },
  },
  {
    title: "checks at once when the watch reports a change during a sleep",
    pollMs: 500,
    deadline: 10_000,
    answerAt: 120,
    wakes: [120],
    expected: { answer: "ready", at: 120, sleeps: [500], checks: [0, 120] },
  },
  {
    title: "goes on polling after a change that did not answer the check",
    pollMs: 500,
    deadline: 10_000,
    answerAt: 700,
    wakes: [120],
    expected: { answer: "ready", at: 1120, sleeps: [500, 500, 500], checks: [0, 120, 620, 1120] },
  },
  {
    title: "a change cuts even the last sleep before the deadline",
    pollMs: 1000,
    deadline: 600,
    answerAt: 400,
    wakes: [400],
    expected: { answer: "ready", at: 400, sleeps: [600], checks: [0, 400] },
  },
  {
    title: "follows a back-off schedule given the number of sleeps so far",
    pollMs: (sleeps) => [5, 10, 20][sleeps] ?? 40,
    deadline: 1000,
    answerAt: 60,
    expected: { answer: "ready", at: 75, sleeps: [5, 10, 20, 40], checks: [0, 5, 15, 35, 75] },
  },
];

describe("waitUntil", () => {
  it.each(CASES)("$title", async ({ pollMs, deadline, answerAt, wakes = [], expected }) => {
    const { source, watch } = fakeWatch();
    const clock = new FakeClock(wakes.map((at) => ({ at, happen: () => source.wake() })));
    const checks: number[] = [];
    const answer = await waitUntil(
      () => {
        checks.push(clock.now());
        return clock.now() >= answerAt ? "ready" : undefined;
      },
      { clock, deadline, pollMs, watch },
    );
    expect({ answer, at: clock.now(), sleeps: clock.sleeps, checks }).toEqual(expected);
    expect(source.closed).toBe(1);
  });

  it("checks again at once, without sleeping, when a change arrives while the check runs", async () => {
    const { source, watch } = fakeWatch();
    const clock = new FakeClock();
    let checks = 0;
    const answer = await waitUntil(
      async () => {
        checks += 1;
        if (checks === 1) source.wake(); // the file changed between the check's read and its verdict
        return checks === 2 ? 42 : undefined;
      },
      { clock, deadline: 1000, pollMs: 500, watch },
    );
    expect({ answer, checks, sleeps: clock.sleeps }).toEqual({ answer: 42, checks: 2, sleeps: [] });
  });

  it("ends with the check's throw and closes the watch", async () => {
    const { source, watch } = fakeWatch();
    const clock = new FakeClock();
    let checks = 0;
    const waiting = waitUntil(
      () => {
        checks += 1;
        if (checks === 3) throw new TypeError("broken check");
        return undefined;
      },
      { clock, deadline: NEVER, pollMs: 10, watch },
    );
    await expect(waiting).rejects.toThrow("broken check");
    expect({ checks, sleeps: clock.sleeps, closed: source.closed }).toEqual({
      checks: 3,
      sleeps: [10, 10],
      closed: 1,
    });
  });

  it("keeps a falsy answer (false, 0, null): only undefined means not yet", async () => {
    for (const value of [false, 0, null, ""]) {
      const clock = new FakeClock();
      expect(await waitUntil(() => value, { clock, deadline: 100, pollMs: 10 })).toBe(value);
      expect(clock.sleeps).toEqual([]);
    }
  });
});

/** A clock whose sleeps end only when cut short: a wait on it can only be answered by a real change. */
const frozenClock = new FakeClock({ frozen: true });

/** Fails a test that waits longer than a generous deadline instead of hanging it. */
function withinDeadline<T>(what: string, waiting: Promise<T>, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([waiting, late]).finally(() => clearTimeout(timer));
}

describe("watchFolders", () => {
  it("wakes a sleeping wait when a file is renamed into a watched folder", async () => {
    const dir = tempDir();
    const file = path.join(dir, "supervisor.json");
    let checks = 0;
    const waiting = waitUntil(
      () => {
        checks += 1;
        return fs.existsSync(file) ? "named" : undefined;
      },
      {
        clock: frozenClock,
        deadline: NEVER,
        pollMs: 60_000,
        watch: watchFolders([dir], ["supervisor.json"]),
      },
    );
    fs.writeFileSync(`${file}.tmp`, "{}");
    fs.renameSync(`${file}.tmp`, file);
    expect(await withinDeadline("the wait", waiting)).toBe("named");
    expect(checks).toBeGreaterThanOrEqual(2);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("wakes only for the names it was given", async () => {
    const dir = tempDir();
    let filtered = 0;
    let filteredWoke = () => {};
    const filteredWakes = new Promise<void>((resolve) => {
      filteredWoke = resolve;
    });
    let anyWoke = () => {};
    const anyWakes = new Promise<void>((resolve) => {
      anyWoke = resolve;
    });
    const stopFiltered = watchFolders(
      [dir],
      ["record.json"],
    )(() => {
      filtered += 1;
      filteredWoke();
    });
    const stopAll = watchFolders([dir])(() => anyWoke());
    try {
      fs.writeFileSync(path.join(dir, "events.jsonl"), "line\n");
      await withinDeadline("the unfiltered watch", anyWakes);
      // Both watches are served from the same inotify event: once the loop has turned, the filtered one
      // has been offered events.jsonl too, and ignored it.
      await new Promise((resolve) => setImmediate(resolve));
      expect(filtered).toBe(0);
      fs.writeFileSync(path.join(dir, "record.json"), "{}");
      await withinDeadline("the filtered watch", filteredWakes);
      expect(filtered).toBeGreaterThanOrEqual(1);
    } finally {
      stopFiltered();
      stopAll();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leaves a folder that cannot be watched to the poll", async () => {
    const clock = new FakeClock();
    const parent = tempDir();
    const missing = path.join(parent, "no-such-folder");
    const answer = await waitUntil(() => (clock.now() >= 200 ? "polled" : undefined), {
      clock,
      deadline: 1000,
      pollMs: 100,
      watch: watchFolders([missing]),
    });
    expect({ answer, sleeps: clock.sleeps }).toEqual({ answer: "polled", sleeps: [100, 100] });
    fs.rmSync(parent, { recursive: true, force: true });
  });
});

describe("what else can wake or end a wait", () => {
  it("ends with undefined as soon as its signal aborts, mid-sleep, and closes the watch", async () => {
    const { source, watch } = fakeWatch();
    const abandon = new AbortController();
    const clock = new FakeClock({ frozen: true });
    let checks = 0;
    const waiting = waitUntil(
      () => {
        checks += 1;
        return undefined;
      },
      { clock, deadline: NEVER, pollMs: 60_000, watch, signal: abandon.signal },
    );
    await new Promise((resolve) => setImmediate(resolve));
    abandon.abort();
    expect(await withinDeadline("the abandoned wait", waiting)).toBeUndefined();
    expect({ checks, closed: source.closed }).toEqual({ checks: 1, closed: 1 });
  });

  it("checks nothing when its signal has aborted already", async () => {
    const abandon = new AbortController();
    abandon.abort();
    let checks = 0;
    const answer = await waitUntil(
      () => {
        checks += 1;
        return "never asked";
      },
      { clock: new FakeClock(), deadline: 1000, pollMs: 100, signal: abandon.signal },
    );
    expect({ answer, checks }).toEqual({ answer: undefined, checks: 0 });
  });

  it("wakes on an emitter's events and on a promise settling, not before", async () => {
    const emitter = new EventEmitter();
    let emitted = false;
    const byEvent = waitUntil(() => (emitted ? "event" : undefined), {
      clock: frozenClock,
      deadline: NEVER,
      pollMs: 60_000,
      watch: wakeOnEvents(emitter, ["end"]),
    });
    emitted = true;
    emitter.emit("end");
    expect(await withinDeadline("the event", byEvent)).toBe("event");
    expect(emitter.listenerCount("end")).toBe(0);

    let settle: () => void = () => {};
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    let done = false;
    const byPromise = waitUntil(() => (done ? "settled" : undefined), {
      clock: frozenClock,
      deadline: NEVER,
      pollMs: 60_000,
      watch: wakeWhenSettled(
        settled.then(() => {
          done = true;
        }),
      ),
    });
    settle();
    expect(await withinDeadline("the promise", byPromise)).toBe("settled");
  });
});
