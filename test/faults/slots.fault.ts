import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { judgeClaims } from "../../src/infra/slot-identity.js";
import { readSlots, slotClassDir } from "../../src/infra/slot-store.js";
import { CLI_MAIN } from "../helpers/folders.js";
import { mostAtOnce, notesOf } from "../helpers/locks.js";
import { isAlive } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";
import { heavy, homeFor, trial, useFaultKit } from "./kit.js";

// Row 15: heavy slots under a crowd. Fifty `catherd lock --slots 3` at once while the test SIGKILLs
// waiters, SIGKILLs holders with their commands, SIGKILLs holders' locks alone (their commands run on)
// and freezes waiters: never more than three commands run, none runs twice, every lock that was not
// killed runs its command once, and the queue ends with no live claim.

useFaultKit();

const CROWD = 50;
const SLOTS = 3;

interface Crowd {
  pid: number;
  exited: Promise<number | null>;
  stderr: () => string;
}

describe("row 15: heavy slots", () => {
  it(`never gives a slot twice to a crowd of ${CROWD} whose holders and waiters are killed and frozen`, async () => {
    const t = trial(`15 ${CROWD} locks, ${SLOTS} slots: waiters and holders SIGKILLed, waiters frozen`, {
      many: true,
    });
    await heavy(t);
    const { home, env } = homeFor(t);
    const notes = path.join(t.dir(), "notes");
    const go = path.join(t.dir(), "go");
    const crowd: Crowd[] = Array.from({ length: CROWD }, (_, i) => {
      // Each command notes its start with its pid, waits for the go-ahead (so that the queue fills before
      // the faults), works 300 ms, and notes its end.
      const child = spawn(
        process.execPath,
        [
          CLI_MAIN,
          "lock",
          "--slots",
          String(SLOTS),
          "--",
          "/bin/sh",
          "-c",
          `echo "start ${i} $$" >> '${notes}'; while [ ! -e '${go}' ]; do sleep 0.05; done; sleep 0.3; echo "end ${i}" >> '${notes}'`,
        ],
        { env, stdio: ["ignore", "ignore", "pipe"] },
      );
      t.pid(child.pid);
      let stderr = "";
      child.stderr?.on("data", (d: Buffer) => {
        stderr += d.toString();
      });
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      return { pid: child.pid as number, exited, stderr: () => stderr };
    });

    // The queue as the store holds it, sampled while the crowd runs: never more than SLOTS live holders.
    const judge = judgeClaims();
    let mostHeld = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        try {
          const { state } = readSlots(slotClassDir(home, "heavy"));
          mostHeld = Math.max(mostHeld, state.holders.filter((c) => judge(c) === "live").length);
        } catch {
          // a version removed between the listing and the read: the next sample reads the newest
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();

    const started = () =>
      new Map(
        notesOf(notes)
          .filter((l) => l.startsWith("start "))
          .map((l) => {
            const [, i, pid] = l.split(" ");
            return [Number(i), Number(pid)] as const;
          }),
      );
    const ended = () =>
      new Set(
        notesOf(notes)
          .filter((l) => l.startsWith("end "))
          .map((l) => Number(l.split(" ")[1])),
      );
    const waiting = () =>
      crowd.flatMap((c, i) => (c.stderr().includes("waiting for a") && !started().has(i) ? [i] : []));
    // Every lock in the queue: three hold (their commands wait for the go-ahead), the rest wait.
    await waitFor(
      "the whole crowd in the queue",
      () => (started().size === SLOTS && waiting().length === CROWD - SLOTS ? true : undefined),
      180_000,
    );

    const killed = new Set<number>();
    // Waiters SIGKILLed: their claims are dead, never served.
    for (const i of waiting().slice(-5)) {
      process.kill(crowd[i]?.pid as number, "SIGKILL");
      killed.add(i);
    }
    // Holders SIGKILLed with their commands: their slots are free at once. The note comes first, so that the
    // count of running commands never lags behind a slot freed by the kill.
    const running = () => [...started()].filter(([i]) => !ended().has(i) && !killed.has(i));
    let wholeKills = 0;
    while (wholeKills < 3) {
      const [holder] = running();
      if (holder === undefined) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      const [i, commandPid] = holder;
      fs.appendFileSync(notes, `kill ${i}\n`);
      process.kill(crowd[i]?.pid as number, "SIGKILL");
      process.kill(commandPid, "SIGKILL");
      killed.add(i);
      wholeKills += 1;
    }
    // Holders' locks alone SIGKILLed: their commands run on, holding their slots, and end by themselves.
    const orphaned: number[] = [];
    while (orphaned.length < 2) {
      const holder = running().find(([i]) => !orphaned.includes(i));
      if (holder === undefined) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      process.kill(crowd[holder[0]]?.pid as number, "SIGKILL");
      orphaned.push(holder[0]);
    }
    // Two waiters frozen for a second (the fault's length, not a wait for a result): the queue keeps their places.
    const frozen = waiting().slice(0, 2);
    for (const i of frozen) process.kill(crowd[i]?.pid as number, "SIGSTOP");
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const i of frozen) process.kill(crowd[i]?.pid as number, "SIGCONT");
    fs.writeFileSync(go, "");

    const codes = await Promise.all(crowd.map((c) => c.exited));
    for (const i of orphaned) {
      const pid = started().get(i) as number;
      await waitFor(`the orphaned command of lock ${i}`, () => (isAlive(pid) ? undefined : true));
    }
    sampling = false;
    await sampler;

    const lines = notesOf(notes);
    const starts = (i: number) => lines.filter((l) => l.startsWith(`start ${i} `)).length;
    const ends = (i: number) => lines.filter((l) => l === `end ${i}`).length;
    const normal = crowd.map((_, i) => i).filter((i) => !killed.has(i) && !orphaned.includes(i));
    const ranOnce = normal.filter((i) => codes[i] === 0 && starts(i) === 1 && ends(i) === 1);
    const neverTwice = crowd.every((_, i) => starts(i) <= 1);
    t.tally.tried = CROWD;
    t.tally.passed =
      ranOnce.length + [...killed, ...orphaned].filter((i) => starts(i) <= 1 && ends(i) <= starts(i)).length;
    t.note(`at most ${mostAtOnce(lines)} commands at once, ${mostHeld} slots held at once (${SLOTS} slots)`);
    expect(mostAtOnce(lines), "commands running at once").toBeLessThanOrEqual(SLOTS);
    expect(mostHeld, "live holders at once").toBeLessThanOrEqual(SLOTS);
    expect(neverTwice).toBe(true);
    expect(ranOnce).toEqual(normal);
    // The orphaned commands ran to their end, their slots held all the while.
    for (const i of orphaned) expect(ends(i)).toBe(1);
    const { state } = readSlots(slotClassDir(home, "heavy"));
    expect([...state.holders, ...state.waiters].filter((c) => judge(c) === "live")).toEqual([]);
  });
});
