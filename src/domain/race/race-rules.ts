import { isValidId } from "../ids.js";

// A race (specs/dispatch.md, "A race"): one brief, several attempts at once, each judged by the check
// (`--verify`). Pure: who wins is a function of the attempts' records alone, so that the winning attempt's
// supervisor and any reader (`wait NAME`) reach the same answer, and the first to reach it writes it down
// once (folder/race.ts) so that a record landing later cannot change it.

/** How a race picks its winner (`--pick`). */
export const RACE_PICKS = ["first-pass", "cheapest-pass", "all"] as const;
export type RacePick = (typeof RACE_PICKS)[number];

/** The default of `--pick`: the first attempt whose check passes wins, and the others are cancelled. */
export const DEFAULT_PICK: RacePick = "first-pass";

/** A race's attempts in all, `--attempts` and `--also` together: at least two, at most eight. */
export const MIN_RACE_ATTEMPTS = 2;
export const MAX_RACE_ATTEMPTS = 8;

/** The name of a race's attempt `k` (1-based): `fix-tests.2`. */
export function attemptName(race: string, k: number): string {
  return `${race}.${k}`;
}

/**
 * Why `race` cannot name a race of `attempts` attempts, or null: every attempt's name must obey the name
 * rule (specs/dispatch.md §1), so the race's name leaves room for the longest suffix.
 */
export function raceNameProblem(race: string, attempts: number): string | null {
  if (!isValidId(race)) return `${JSON.stringify(race.slice(0, 80))} is not a name`;
  const longest = attemptName(race, attempts);
  if (isValidId(longest)) return null;
  const room = 64 - (longest.length - race.length);
  return `a race's attempts are named ${race}.1 … ${longest}, longer than a name's 64 characters: a race of ${attempts} attempts takes a name of at most ${room}`;
}

/** One attempt as the rule reads it: its chain followed to its last attempt (a repair turn is part of it). */
export interface RaceAttempt {
  /** 1-based, as its name's suffix. */
  attempt: number;
  /** Its first dispatch's id: the last tie-break. */
  dispatchId: string;
  /** Its chain has ended: the last attempt has a record that hands over to nothing. */
  ended: boolean;
  /** The check passed on the chain's last record (record.json `verify.passed` with status ok). */
  passed: boolean;
  /** Its cost over every turn of its chain; null when any turn's is unknown. */
  costUsd: number | null;
  /** The chain's last record's `endedAt` (ISO), null while it goes on. */
  endedAt: string | null;
}

/** What the rule says of a race as its attempts stand. */
export interface RaceDecision {
  /** The race is decided: `wait NAME` returns. */
  decided: boolean;
  /** The winning attempt's number; null while undecided, when none passed, and always for `all`. */
  winner: number | null;
  /** The attempts to cancel now: with first-pass, every attempt not ended once one has passed. */
  cancel: number[];
}

/**
 * The race's decision:
 * - first-pass: decided once an attempt has passed — the first to pass wins (earliest `endedAt`, ties by
 *   dispatch id) and every attempt not ended is cancelled; or once all have ended with none passing;
 * - cheapest-pass: decided once every attempt has ended; the passing one with the lowest cost wins (an
 *   unknown cost after every known one), ties by the first to pass;
 * - all: decided once every attempt has ended; no winner, nothing cancelled.
 */
export function decideRace(pick: RacePick, attempts: readonly RaceAttempt[]): RaceDecision {
  const passed = attempts.filter((a) => a.ended && a.passed).sort(byFirstToPass);
  const allEnded = attempts.every((a) => a.ended);
  if (pick === "first-pass") {
    const first = passed[0];
    if (first === undefined) return { decided: allEnded, winner: null, cancel: [] };
    const cancel = attempts.filter((a) => !a.ended).map((a) => a.attempt);
    return { decided: true, winner: first.attempt, cancel };
  }
  if (!allEnded) return { decided: false, winner: null, cancel: [] };
  if (pick === "all") return { decided: true, winner: null, cancel: [] };
  const cheapest = [...passed].sort(byCost)[0];
  return { decided: true, winner: cheapest?.attempt ?? null, cancel: [] };
}

/** The first to pass first: earliest endedAt, then dispatch id. */
function byFirstToPass(a: RaceAttempt, b: RaceAttempt): number {
  const at = (a.endedAt ?? "").localeCompare(b.endedAt ?? "");
  if (at !== 0) return at;
  return a.dispatchId < b.dispatchId ? -1 : a.dispatchId > b.dispatchId ? 1 : 0;
}

/** Lowest cost first, unknown last; a stable sort keeps the first to pass first among equals. */
function byCost(a: RaceAttempt, b: RaceAttempt): number {
  if (a.costUsd === null || b.costUsd === null) return a.costUsd === null ? (b.costUsd === null ? 0 : 1) : -1;
  return a.costUsd - b.costUsd;
}

/** `--also BACKEND[:MODEL]` as given: the backend's id and the model (null: the CLI's default). */
export interface AlsoAttempt {
  backend: string;
  model: string | null;
}

/** Splits `claude-code:claude-sonnet-4-5` at its first colon; the backend's id is checked by the caller. */
export function parseAlso(text: string): AlsoAttempt {
  const colon = text.indexOf(":");
  if (colon < 0) return { backend: text, model: null };
  return { backend: text.slice(0, colon), model: text.slice(colon + 1) };
}

/** Lines a unified patch adds and removes (its `+`/`-` lines, not the `+++`/`---` headers). */
export function patchLineCounts(patch: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  let inHunk = false;
  for (const line of patch.split("\n")) {
    if (line.startsWith("diff --git ")) inHunk = false;
    else if (line.startsWith("@@")) inHunk = true;
    else if (inHunk && line.startsWith("+")) added++;
    else if (inHunk && line.startsWith("-")) removed++;
  }
  return { added, removed };
}
