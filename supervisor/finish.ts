import type { RecordFile, Spec } from "../src/domain/schemas.js";
import { checkDue } from "../src/folder/check-due.js";
import { FILES } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import type { CgroupUsage } from "../src/infra/cgroup/cgroup-usage.js";
import { okValue } from "../src/infra/json-file.js";
import { type StopReport, stopDispatch } from "../src/infra/stop.js";
import {
  type EarlyPromoter,
  promoteAfterRecord,
  startPromoterEarly,
  startWakerIfParked,
} from "./after-record.js";
import type { CheckAt } from "./check.js";
import type { RunningChild } from "./child.js";
import { type Contained, closeContainment } from "./containment.js";
import type { SupervisorDeps } from "./deps.js";
import { releaseReserve, withRoom } from "./disk-reserve.js";
import { type Ending, writeExitFile } from "./exit-file.js";
import { failure, type SupervisorLog } from "./log.js";
import { enterPhase } from "./phases.js";
import { settleRaceAfterRecord } from "./race-settle.js";
import type { RaisedSandbox } from "./sandbox/sandbox.js";
import { pauseAt } from "./test-hooks.js";

// The end of every supervision, a first supervisor's or an adopter's: the stop sequence, the cgroup's
// figures, exit.json, then record.json (specs/supervisor.md, "The stop sequence" and "The end").

/** The agent under supervision, however it came to be: spawned here, or adopted. */
export interface Watched {
  /** What the stop and the ending need of the spec. */
  limits: Pick<Spec, "dispatchId" | "killGraceMs" | "memoryBytes">;
  child: RunningChild;
  /** The agent's start time as read right after the spawn (or from proc.json when adopted): the stop trusts this. */
  startTime: string | null;
  contained: Contained;
}

/** Where exit.json's startedAt and durationMs count from: the dispatch's first supervisor's start. */
export interface Origin {
  wall: Date;
  mono: number;
}

/** How a supervision ended, and what ran under it. */
export interface Run {
  ending: Ending;
  watched: Watched | null;
  origin: Origin;
  adoptions: number;
  pgid: number | null;
  /** The agent's sandbox, still raised: the check (`--verify`) runs inside it. */
  sandbox: RaisedSandbox | null;
}

/** Where the end is written and what writes it. */
interface Finishing {
  dir: string;
  deps: SupervisorDeps;
  log: SupervisorLog;
}

/** Stops what runs, reads and removes the cgroup, writes exit.json, then record.json. */
export async function finish(dir: string, deps: SupervisorDeps, log: SupervisorLog, run: Run) {
  enterPhase(log, dir, "stopping");
  const { watched } = run;
  // Started now to overlap the stop and the record; released by the record, or here whatever happens.
  const early = watched === null ? null : await startPromoterEarly(dir, log);
  try {
    await stopAndRecord({ dir, deps, log }, run, early);
  } finally {
    early?.release();
  }
}

async function stopAndRecord(at: Finishing, run: Run, early: EarlyPromoter | null) {
  const { dir, deps, log } = at;
  const { watched } = run;
  const { stop, usage } = await stopWatched(at, run);
  const exitWritten = writeExitFile(dir, deps, log, {
    ending: run.ending,
    stop,
    child: watched?.child ?? null,
    startedAt: run.origin.wall,
    startedMono: run.origin.mono,
    durationMs: Math.round(deps.clock.now() - run.origin.mono),
    adoptions: run.adoptions,
    containment: watched?.contained.kind ?? null,
    usage,
    memoryBytes: watched?.limits.memoryBytes ?? null,
  });
  if (exitWritten) {
    enterPhase(log, dir, "exited");
    await checkIfAsked({ dir, deps, log, sandbox: run.sandbox });
    await record(dir, deps, log, early);
  }
  // Nothing more of the supervisor's to write: the room goes back, to a later reader if need be.
  releaseReserve(dir);
}

/** Stops the agent (if one ran), waits briefly for a spawned leader's exit, and reads its cgroup's figures. */
async function stopWatched(
  at: Finishing,
  run: Run,
): Promise<{ stop: StopReport; usage: CgroupUsage | null }> {
  const { watched } = run;
  if (watched === null) return { stop: { term: false, kill: false, swept: 0 }, usage: null };
  const stop = await stopAgent(at, watched, run.pgid, run.ending.reason);
  // A spawned leader is reaped by now or soon: its own code and signal belong in exit.json.
  if (watched.child.exit === null && run.adoptions === 0) {
    await Promise.race([watched.child.exited, at.deps.clock.sleep(1000)]);
  }
  return { stop, usage: closeContainment(watched.contained, at.log) };
}

/** Whether the folder's check is still due (check.ts `checkStillDue`), for a supervisor that finds exit.json. */
export function checkDueIn(dir: string): boolean {
  const spec = okValue(readFolderJson(dir, FILES.spec));
  return checkDue(dir, spec, spec?.verify === undefined ? null : okValue(readFolderJson(dir, FILES.exit)));
}

/** A check taken over from a supervisor that died after exit.json: the check, then the record and what follows it. */
export async function recordAfterCheck(dir: string, deps: SupervisorDeps, log: SupervisorLog): Promise<void> {
  await checkIfAsked({ dir, deps, log, sandbox: null });
  await record(dir, deps, log, null);
  releaseReserve(dir);
}

/** The check (`--verify`) of a dispatch that asked for one; its code is loaded only then. */
async function checkIfAsked(at: CheckAt): Promise<void> {
  if (okValue(readFolderJson(at.dir, FILES.spec))?.verify === undefined) return;
  const { checkIfDue } = await import("./check.js");
  await checkIfDue(at);
}

/** record.json after exit.json (and the check); loaded only now, so the start path stays light. */
async function record(dir: string, deps: SupervisorDeps, log: SupervisorLog, early: EarlyPromoter | null) {
  try {
    const { writeRecord } = await import("../src/folder/record.js");
    // Its own part of the run's ledger, the record's figures, goes before the record (folder/run-ledger.ts).
    // Before the record frees its slot: what this dispatch saw of its account's windows holds the queue.
    const { reportToAccount } = await import("./account-report.js");
    const beforeRecord = (body: RecordFile) =>
      reportToAccount(dir, body).catch((error: unknown) => log("account-report-failed", failure(error)));
    const written = await withRoom(dir, log, "record.json", () =>
      writeRecord(dir, deps.clock, deps.files, { ownPart: true, beforeRecord }),
    );
    log("recorded", { status: written?.status ?? "already recorded" });
    enterPhase(log, dir, "recorded");
    // `outcome: null` is written only when it was asked for (--outcome) and the reply had no line.
    if (written?.outcome === null) {
      log("no-outcome-line", {
        message: "asked for an outcome (--outcome), the final message carried no STATUS line: outcome null",
      });
    }
  } catch (error) {
    log("record-write-failed", failure(error));
  }
  enterPhase(log, dir, "after-record");
  await settleRaceAfterRecord(dir, log, deps.clock);
  await promoteAfterRecord(dir, log, deps.clock, early).catch((error: unknown) =>
    log("promoter-failed", failure(error)),
  );
  await startWakerIfParked(dir, log, deps.clock);
}

/**
 * A cap on spending reached stops the agent within this much, whatever its kill grace: a CLI that does
 * not act on SIGTERM at once (opencode while it installs its plugin drops it) must not go on spending for
 * the grace the user gave for saving its work. Short of the second a CLI takes between two model
 * requests when its tools are quick, so that the crossing report's next request is the last; the four
 * CLIs write their sessions as they go, so a kill loses none of them.
 */
export const BUDGET_KILL_GRACE_MS = 250;

/** How long the stop waits after SIGTERM: the dispatch's kill grace, at most BUDGET_KILL_GRACE_MS for a budget stop. */
export function stopGraceMs(reason: Ending["reason"], killGraceMs: number): number {
  return reason === "budget" ? Math.min(killGraceMs, BUDGET_KILL_GRACE_MS) : killGraceMs;
}

async function stopAgent(
  at: Finishing,
  watched: Watched,
  pgid: number | null,
  reason: Ending["reason"],
): Promise<StopReport> {
  const { dir, log } = at;
  const { limits: spec, child, startTime } = watched;
  try {
    const report = await stopDispatch(
      {
        dispatchId: spec.dispatchId,
        pgid,
        leader: child.exit === null && startTime !== null ? { pid: child.pid, startTime } : null,
        killGraceMs: stopGraceMs(reason, spec.killGraceMs),
        cgroup: watched.contained.cgroup,
        onTermSent: () => pauseAt("term-sent", dir),
      },
      at.deps.clock,
    );
    log("stopped", { ...report });
    return report;
  } catch (error) {
    log("stop-error", failure(error));
    return { term: false, kill: false, swept: 0 };
  }
}
