import * as fs from "node:fs";
import { decideRace, patchLineCounts, type RaceAttempt } from "../domain/race/race-rules.js";
import type { DecisionFile, RaceFile, RecordFile } from "../domain/schemas.js";
import { billedTokens } from "../domain/spend/usage.js";
import { okValue } from "../infra/json-file.js";
import type { RunPaths } from "../infra/paths.js";
import { FILES, fileIn, runOf } from "./layout.js";
import {
  checkOf,
  freezeDecision,
  type RaceRead,
  readDecision,
  readRaceById,
  type Turn,
  turnsEnded,
  turnsOf,
} from "./race.js";
import { readFolderJson } from "./read.js";
import { requestCancel } from "./write.js";

// Where each attempt of a race stands, read from its own folders, and the race settled from that: its
// decision (the pure rule, domain/race/race-rules.ts) frozen once, and the losers a first-pass race
// cancels. The winning attempt's supervisor settles its race after its record; any reader does the same
// as a fallback: both are idempotent.

/** How an attempt's check went: passed, failed (red after its repairs), not run, or null while it goes on. */
export type CheckResult = "passed" | "failed" | "not run";

/** One attempt of a race as `result NAME` shows it: its chain's turns summed, its last turn's verdict. */
export interface AttemptStanding {
  attempt: number;
  name: string;
  backend: string;
  model: string | null;
  /** Its first dispatch's id (race.json), and its last turn's folder. */
  dispatchId: string;
  dir: string;
  ended: boolean;
  check: CheckResult | null;
  /** Repair turns its chain took after a red check (or an answer that did not fit). */
  repairs: number;
  status: RecordFile["status"] | null;
  kind: string | null;
  tokens: number | null;
  costUsd: number | null;
  /** From its first turn's start to its last turn's end; null while it goes on. */
  wallMs: number | null;
  added: number | null;
  removed: number | null;
  branch: string | null;
  /** Every turn's changes.patch that exists, first to last. */
  patches: string[];
  endedAt: string | null;
}

/** The standing of one attempt, from its chain's folders. */
export function standingOf(
  run: RunPaths,
  attempt: RaceFile["attempts"][number],
  { lines: countLines = true }: { lines?: boolean } = {},
): AttemptStanding {
  const turns = turnsOf(run, attempt);
  const last = turns.at(-1) as Turn;
  const ended = turnsEnded(turns);
  const record = ended ? last.record : null;
  const records = turns.flatMap((t) => (t.record === null ? [] : [t.record]));
  // The patches are read for people (`result`); a decision does not need them.
  const lines = countLines ? linesOf(turns) : { added: null, removed: null, patches: [] };
  const startedAt = records[0]?.startedAt ?? records[0]?.admittedAt ?? null;
  return {
    attempt: attempt.attempt,
    name: attempt.name,
    backend: record?.backend ?? attempt.backend,
    model: record?.model ?? attempt.model,
    dispatchId: attempt.dispatchId,
    dir: last.dir,
    ended,
    check: record === null ? null : checkResult(record),
    repairs: turns.filter((t) => t.why === "repair").length,
    status: record?.status ?? null,
    kind: record?.error?.kind ?? null,
    tokens: records.length === 0 ? null : records.reduce((sum, r) => sum + tokensOf(r), 0),
    costUsd: records.some((r) => r.costUsd === null)
      ? null
      : records.reduce((s, r) => s + (r.costUsd ?? 0), 0),
    wallMs:
      record === null || startedAt === null
        ? null
        : Math.max(0, Date.parse(record.endedAt) - Date.parse(startedAt)),
    ...lines,
    branch: branchOf(turns),
    endedAt: record?.endedAt ?? null,
  };
}

/** The check's result on a chain's last record: passed only with status ok. */
function checkResult(record: RecordFile): CheckResult {
  const check = checkOf(record);
  if (record.status === "ok" && check?.passed === true) return "passed";
  return check === null || check.passed === null ? "not run" : "failed";
}

function tokensOf(record: RecordFile): number {
  return record.usage === undefined ? record.tokens.input + record.tokens.output : billedTokens(record.usage);
}

/** Patches larger than this are not counted: their lines are unknown (null). */
const MAX_COUNTED_PATCH_BYTES = 32 * 1024 * 1024;

/** The lines every turn's patch adds and removes; null when a patch is too large to count. */
function linesOf(turns: readonly Turn[]): Pick<AttemptStanding, "added" | "removed" | "patches"> {
  let added: number | null = 0;
  let removed: number | null = 0;
  const patches: string[] = [];
  for (const turn of turns) {
    const file = fileIn(turn.dir, FILES.patch);
    const size = fs.statSync(file, { throwIfNoEntry: false })?.size;
    if (size === undefined) continue;
    patches.push(file);
    if (size > MAX_COUNTED_PATCH_BYTES || added === null || removed === null) {
      added = null;
      removed = null;
      continue;
    }
    const counts = patchLineCounts(fs.readFileSync(file, "utf8"));
    added += counts.added;
    removed += counts.removed;
  }
  return { added, removed, patches };
}

/** The worktree's branch, from the last turn's record, else its spec.json. */
function branchOf(turns: readonly Turn[]): string | null {
  for (const turn of [...turns].reverse()) {
    if (turn.record?.worktree != null) return turn.record.worktree.branch;
    const spec = okValue(readFolderJson(turn.dir, FILES.spec));
    if (spec?.worktree != null) return spec.worktree.branch;
  }
  return null;
}

/** What the rule reads of an attempt. */
export function ruleInput(s: AttemptStanding): RaceAttempt {
  return {
    attempt: s.attempt,
    dispatchId: s.dispatchId,
    ended: s.ended,
    passed: s.check === "passed",
    costUsd: s.costUsd,
    endedAt: s.endedAt,
  };
}

/** A race settled: where each attempt stands, and its decision (null while undecided). */
export interface Settled {
  standings: AttemptStanding[];
  decision: DecisionFile | null;
  /** The last turns of the attempts cancelled by this settling (first-pass losers not ended). */
  cancelled: string[];
}

/**
 * Settles a race as its attempts stand: the decision written once when the rule finds it decided (or
 * read, when written before), and — with first-pass and a winner — a cancel asked of every other attempt
 * not ended. Idempotent: a cancel file already there is written again, harmlessly.
 */
export function settleRace(
  run: RunPaths,
  { dir, race }: RaceRead,
  { by, at, lines }: { by: DecisionFile["by"]; at: Date; lines?: boolean },
): Settled {
  const standings = race.attempts.map((a) => standingOf(run, a, lines === undefined ? {} : { lines }));
  let decision = readDecision(dir);
  if (decision === null) {
    const rule = decideRace(race.pick, standings.map(ruleInput));
    if (rule.decided) {
      const winner = rule.winner;
      decision = freezeDecision(dir, {
        raceId: race.raceId,
        pick: race.pick,
        winner,
        decidedAt: at.toISOString(),
        by,
      });
    }
  }
  const cancelled = losersToCancel(standings, decision);
  for (const last of cancelled) requestCancel(last, at);
  return { standings, decision, cancelled };
}

/** With first-pass and a winner, the last turns of the other attempts not ended. */
export function losersToCancel(
  standings: readonly AttemptStanding[],
  decision: DecisionFile | null,
): string[] {
  if (decision === null || decision.pick !== "first-pass" || decision.winner === null) return [];
  return standings
    .filter((s) => s.attempt !== decision.winner && !s.ended && !fs.existsSync(fileIn(s.dir, FILES.cancel)))
    .map((s) => s.dir);
}

/** The race a dispatch folder is an attempt of, as its admit.json names it; null for none. */
export function raceOfFolder(dir: string): { name: string; raceId: string } | null {
  return okValue(readFolderJson(dir, FILES.admit))?.race ?? null;
}

/**
 * The race the folder is an attempt of, settled (without counting patches: a decision needs none); null
 * for a folder of no race, or a race whose file cannot be read. Promotion asks it of a queued attempt
 * before starting it, so that a loser of a decided race is ended instead, whoever promotes first.
 */
export function settleRaceOf(dir: string, at: Date): Settled | null {
  const race = raceOfFolder(dir);
  const run = runOf(dir);
  if (race === null || run === null) return null;
  const read = readRaceById(run, race.name, race.raceId);
  return read === null ? null : settleRace(run, read, { by: "reader", at, lines: false });
}
