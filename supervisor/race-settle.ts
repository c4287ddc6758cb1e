import { FILES, runOf } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import type { Clock } from "../src/infra/clock.js";
import { okValue } from "../src/infra/json-file.js";
import type { SupervisorLog } from "./log.js";

/**
 * Right after its record, the supervisor of a race's attempt settles its race (specs/dispatch.md, "A
 * race"): the decision written once it is decided and, with first-pass, a cancel asked of every other
 * attempt still going — before the promoter runs, so that a loser waiting in the queue is ended, not
 * started. A folder of no race costs the read of its admit.json; the race's code is loaded only for one.
 * Never throws: a reader (`wait NAME`) settles it as well.
 */
export async function settleRaceAfterRecord(dir: string, log: SupervisorLog, clock: Clock): Promise<void> {
  const race = okValue(readFolderJson(dir, FILES.admit))?.race;
  const run = runOf(dir);
  if (race === undefined || run === null) return;
  try {
    const { readRaceById } = await import("../src/folder/race.js");
    const { settleRace } = await import("../src/folder/race-standing.js");
    const read = readRaceById(run, race.name, race.raceId);
    if (read === null) {
      log("race-unreadable", { race: race.name, raceId: race.raceId });
      return;
    }
    const settled = settleRace(run, read, { by: "supervisor", at: clock.wallNow(), lines: false });
    if (settled.decision === null) return;
    log("race-decided", {
      race: race.name,
      winner: settled.decision.winner,
      by: settled.decision.by,
      cancelled: settled.cancelled,
    });
  } catch (error) {
    log("race-settle-failed", { message: error instanceof Error ? error.message : String(error) });
  }
}
