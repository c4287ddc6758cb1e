import { started as startedIn } from "../domain/lock/slots.js";
import type { Clock } from "../infra/clock.js";
import { DEFAULT_CLASS, lockRequest } from "./lock-request.js";
import { type CommandPlace, startGated } from "./run-command.js";
import { takerOf } from "./run-locked.js";
import { change, leaveQueue, takeSlot } from "./take-slot.js";

// A command run in a slot of the machine's lock by a catherd process that is not `catherd lock` — a
// dispatch's check (specs/dispatch.md, "Checks and races"): the same queue, the same gate (the claim names
// the command before it runs, so the slot stays held while the command lives, whatever becomes of its
// holder), but the holder's own signals and output stay its own.

/** One command to run in a slot of the default class. */
export interface SlotCommand {
  cmd: string;
  args: readonly string[];
  place: CommandPlace;
  /** The home whose slots are taken. */
  home: string;
  /** Give up after this long without a slot. */
  waitMs: number;
  clock: Clock;
  /** Ends the wait; once the command runs, the holder signals it itself. */
  interrupt: AbortSignal;
  /**
   * Called once the queue names the command and before it runs (its gate still shut): its pid (its process
   * group's) and start time. A throw closes the gate: nothing runs.
   */
  onStarted: (pid: number, startTime: string | null) => void;
}

export type SlotCommandEnd =
  | { kind: "ran"; exitCode: number; waitedMs: number }
  | { kind: "busy"; waitedMs: number }
  | { kind: "interrupted" };

/** Waits for a slot, runs the command in it, releases it when the command ends. */
export async function runInSlot(run: SlotCommand): Promise<SlotCommandEnd> {
  const { place, clock } = run;
  const request = {
    ...lockRequest({
      slots: undefined,
      cls: DEFAULT_CLASS,
      wait: undefined,
      positionals: [],
      rest: [run.cmd, ...run.args],
      env: place.env,
    }),
    waitMs: run.waitMs,
  };
  const taker = takerOf(request, run.home, place.env, clock);
  const taken = await takeSlot(taker, { waitMs: run.waitMs, interrupt: run.interrupt, onView: () => {} });
  if (taken.kind !== "took") {
    return taken.kind === "busy" ? { kind: "busy", waitedMs: run.waitMs } : { kind: "interrupted" };
  }
  const id = taker.claim.id;
  try {
    const command = await startGated({
      cmd: request.cmd,
      args: request.args,
      signals: null,
      place,
      named: async (pid, startTime) => {
        await change(
          taker,
          (current) => startedIn(current, id, { pid, startTime }),
          (current) => current.holders.some((c) => c.id === id && c.command?.pid === pid),
        );
        // Before the gate opens: the holder names the command where it keeps its own account of it too.
        run.onStarted(pid, startTime);
      },
    });
    return { kind: "ran", exitCode: await command.ended, waitedMs: taken.waitedMs };
  } finally {
    await leaveQueue(taker).catch(() => {});
  }
}
