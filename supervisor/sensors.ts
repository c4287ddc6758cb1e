import * as fs from "node:fs";
import type { Crossing } from "../src/domain/spend/budget.js";
import type { Clock } from "../src/infra/clock.js";
import type { ActivityWriter } from "./activity.js";
import type { DiskWatch } from "./disk-watch.js";
import type { QuotaKeeper } from "./quota-file.js";
import type { RunBudgetWatch } from "./run-budget-watch.js";
import { NOTHING, type Sensor, type Sight } from "./sensor.js";
import type { SlotReports } from "./slot-reports.js";
import type { SpendWatch } from "./spend-watch.js";
import type { Steering } from "./steering.js";
import type { UsageLogReader } from "./usage-log.js";
import type { WatchCore } from "./watch-core.js";

// The watch loop's smaller sensors (specs/supervisor.md, "The loop"), each over the collaborator that
// knows its part of the world. The agent's output is agent-sensor.ts, the folder watches news.ts.

/** A capped dispatch whose CLI keeps a usage log looks at it at least this often (it is not watched). */
export const USAGE_LOG_POLL_MS = 1000;

const after = (at: number | null): Sight => (at === null ? NOTHING : { nextLookAt: at });

/** Where what the CLI's usage log reports goes: its usage as the stream's, its windows to quota.json. */
export interface UsageLogSinks {
  activity: ActivityWriter;
  spend: SpendWatch;
  quota: QuotaKeeper;
}

/**
 * The CLI's own usage log: its reports count as the stream's do, but are not progress. Read again once the
 * agent has exited (a log not found yet is looked for then, whatever the time since the last search).
 */
export function usageLogSensor(log: UsageLogReader, core: WatchCore, sinks: UsageLogSinks): Sensor {
  const { activity, spend, quota } = sinks;
  return {
    look(now, seen) {
      for (const facts of log.read(core.state.thread, now, seen.exited)) {
        if (facts.quota !== undefined) quota.note(facts.quota, now);
        const ignored = activity.note(facts);
        if (ignored !== null) spend.ignore(log.path ?? "usage log", ignored);
      }
      return after(spend.capped ? now + USAGE_LOG_POLL_MS : null);
    },
  };
}

/**
 * The spend against the spec's caps, looked at when a usage report came; then against the run's budget
 * (run-budget-watch.ts), looked at every RUN_LOOK_MS while the run has one. A cap reached stays reached.
 */
export function spendingSensor(
  spend: SpendWatch,
  runBudget: RunBudgetWatch | null,
  activity: ActivityWriter,
  clock: Clock,
): Sensor {
  let budget: Crossing | null = null;
  /** How many usage reports the last look at the caps saw. */
  let seen = 0;
  return {
    async look(now) {
      if (spend.capped && budget === null && activity.usageReports !== seen) {
        seen = activity.usageReports;
        budget = await spend.crossed(activity.accounts(), clock.wallNow());
      }
      if (runBudget !== null && budget === null) {
        budget = await runBudget.look(now, clock.wallNow(), activity.usageReports, (at) =>
          spend.spendNow(activity.accounts(), at, runBudget.wantsDollars),
        );
      }
      return { saw: { budget }, nextLookAt: runBudget?.dueAt() ?? Number.POSITIVE_INFINITY };
    },
  };
}

/** thread.json, once the stream names the thread (again when it names another); `written`: already. */
export function threadSensor(
  core: WatchCore,
  written: string | null,
  write: (thread: string) => void,
): Sensor {
  return {
    look() {
      const thread = core.state.thread;
      if (thread !== null && thread !== written) {
        written = thread;
        write(thread);
      }
      return NOTHING;
    },
  };
}

/**
 * The reports of the dispatch's locks (slot-reports.ts): a lock waiting for a heavy slot, or running its
 * command; read again every SLOT_RECHECK_MS while one is live. `watched`: whether the folder watch can
 * tell of a report's change (news.ts).
 */
export function slotSensor(
  slots: SlotReports,
  core: WatchCore,
  activity: ActivityWriter,
  watched: () => boolean,
): Sensor {
  return {
    look(now) {
      // activity.json shows the time waited: a move is a change to write.
      if (core.slots(slots.read(now, watched()), now)) activity.touch();
      return after(slots.dueAt());
    },
  };
}

/** activity.json, rewritten when it changed and ACTIVITY_INTERVAL_MS has passed; looks when it falls due. */
export function activitySensor(
  activity: ActivityWriter,
  core: WatchCore,
  toWall: (mono: number) => string,
): Sensor {
  return {
    look(now) {
      activity.flush(core.state, now, toWall);
      return after(activity.dueAt());
    },
  };
}

/**
 * Rule 0 (specs/supervisor.md, "A full disk"): a disk that can no longer keep the agent's output ends the
 * dispatch before any other rule, an exit in the same poll included (its last lines may be what the disk
 * refused).
 */
export function diskSensor(disk: DiskWatch): Sensor {
  return {
    look() {
      const full = disk.look();
      if (full === null) return NOTHING;
      return {
        stop: { reason: "supervisor-error", errorKind: "disk", budget: null, disk: full },
        nextLookAt: Number.POSITIVE_INFINITY,
      };
    },
  };
}

/** A `cancel` file, or a signal to the supervisor. Either cuts the sleep (news.ts): no look of its own. */
export function cancelSensor(cancelPath: string, interrupt: AbortSignal): Sensor {
  const requested: Sight = Object.freeze({
    saw: { cancelRequested: true },
    nextLookAt: Number.POSITIVE_INFINITY,
  });
  return {
    look: () => (interrupt.aborted || fs.existsSync(cancelPath) ? requested : NOTHING),
  };
}

/**
 * A steerable dispatch's conversation (steering.ts): gives the CLI what is due while the agent runs and no
 * cancel stands, and tells the rules where the conversation is. Its deadlines are the rules' own
 * (nextDeadline, from what it saw).
 */
export function steeringSensor(steering: Steering): Sensor {
  return {
    look(now, seen) {
      if (!seen.exited && !seen.cancelRequested) steering.look(now);
      return { saw: { steer: steering.signals(now) }, nextLookAt: Number.POSITIVE_INFINITY };
    },
  };
}
