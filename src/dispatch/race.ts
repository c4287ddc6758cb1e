import { CatherdError } from "../domain/errors.js";
import type { DecisionFile, RaceFile } from "../domain/schemas.js";
import { FILES } from "../folder/layout.js";
import type { RaceRead } from "../folder/race.js";
import { type AttemptStanding, type Settled, settleRace } from "../folder/race-standing.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { dispatchDir, type RunPaths } from "../infra/paths.js";
import { waitUntil, watchFolders } from "../infra/wait-until.js";
import { cancelDispatch } from "./cancel.js";
import { readDispatches } from "./reader.js";
import { WAIT_FALLBACK_POLL_MS } from "./wait.js";

// A race read by its name (specs/dispatch.md, "A race"; specs/cli.md): `wait NAME` until it is decided,
// `result NAME` its attempts and its winner, `cancel NAME` every attempt. Each look goes through the reader
// gate (promotion, a chain's due hand-over — a repair turn —, a dead attempt recorded), then settles the
// race as its winning supervisor would: the decision frozen once, the first-pass losers cancelled.

/** The first dispatch folder of each attempt: the reader gate follows each chain from there. */
function firstDirs(run: RunPaths, race: RaceFile): string[] {
  return race.attempts.map((a) => dispatchDir(run, a.name, a.dispatchId));
}

/**
 * One look at a race: every attempt through the reader gate, then the race settled; with first-pass and a
 * winner, every other attempt not ended is cancelled as `cancel` would (a queued one ended under the
 * run's lock, a running one asked to stop, a chain whose repair is due stopped).
 */
export async function lookAtRace(
  run: RunPaths,
  read: RaceRead,
  { clock = systemClock, lines = true }: { clock?: Clock; lines?: boolean } = {},
): Promise<Settled> {
  await readDispatches(firstDirs(run, read.race), { clock, chain: "last" });
  const settled = settleRace(run, read, { by: "reader", at: clock.wallNow(), lines });
  for (const loser of losers(settled)) {
    await cancelDispatch(dispatchDir(run, loser.name, loser.dispatchId), { clock });
  }
  return settled;
}

/** The attempts a decided first-pass race cancels: every attempt not ended but its winner. */
function losers({ standings, decision }: Settled): AttemptStanding[] {
  if (decision === null || decision.pick !== "first-pass" || decision.winner === null) return [];
  return standings.filter((s) => !s.ended && s.attempt !== decision.winner);
}

/** `wait NAME` of a race: until it is decided (timed out: the last look, `timedOut`). */
export async function awaitRace(
  run: RunPaths,
  read: RaceRead,
  options: { timeoutMs: number | null; clock?: Clock },
): Promise<Settled & { timedOut: boolean }> {
  const clock = options.clock ?? systemClock;
  // Each look reads no patch (a decision needs none); the answer counts their lines once, at the end.
  const decided = await waitUntil(
    async () => {
      const look = await lookAtRace(run, read, { clock, lines: false });
      return look.decision === null ? undefined : look;
    },
    {
      clock,
      deadline: options.timeoutMs === null ? Number.POSITIVE_INFINITY : clock.now() + options.timeoutMs,
      pollMs: WAIT_FALLBACK_POLL_MS,
      watch: watchFolders(firstDirs(run, read.race), [FILES.record, FILES.next]),
    },
  );
  const settled = settleRace(run, read, { by: "reader", at: clock.wallNow() });
  return { ...settled, timedOut: decided === undefined };
}

/** The exit of `wait NAME`: 0 with a winner (for `--pick all`, when any attempt passed), else 1. */
export function raceExitCode({ standings, decision }: Settled): number {
  if (decision === null) return 1;
  if (decision.winner !== null) return 0;
  return decision.pick === "all" && standings.some((s) => s.check === "passed") ? 0 : 1;
}

/** `result NAME` of a race: settled; E_NOT_RECORDED while it is not decided. */
export async function raceResult(
  run: RunPaths,
  read: RaceRead,
  clock: Clock = systemClock,
): Promise<Settled & { decision: DecisionFile }> {
  const settled = await lookAtRace(run, read, { clock });
  const { decision } = settled;
  if (decision === null) {
    const going = settled.standings.filter((s) => !s.ended).map((s) => s.name);
    throw new CatherdError(
      "E_NOT_RECORDED",
      `race ${read.race.name} is not decided yet (${going.join(", ")} ${going.length === 1 ? "goes" : "go"} on)`,
      { fix: `catherd wait ${read.race.name}` },
    );
  }
  return { ...settled, decision };
}

/** `cancel NAME` of a race: every attempt cancelled as `cancel` cancels a dispatch (its chain included). */
export async function cancelRace(
  run: RunPaths,
  read: RaceRead,
  options: { wait?: boolean; clock?: Clock } = {},
): Promise<AttemptStanding[]> {
  const clock = options.clock ?? systemClock;
  for (const dir of firstDirs(run, read.race)) {
    await cancelDispatch(dir, { clock, wait: options.wait === true });
  }
  return settleRace(run, read, { by: "reader", at: clock.wallNow() }).standings;
}
