import { awaitRace, raceExitCode } from "../dispatch/race.js";
import { type RunningSnapshot, runningSnapshot } from "../dispatch/read/snapshot.js";
import { overview } from "../dispatch/status.js";
import { awaitRecords } from "../dispatch/wait.js";
import { CatherdError, WAIT_TIMEOUT_EXIT } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { formatDuration, parseDuration } from "../domain/text/duration.js";
import { FILES } from "../folder/layout.js";
import { markSeen } from "../folder/markers.js";
import type { RaceRead } from "../folder/race.js";
import { readFolderJson } from "../folder/read.js";
import { systemClock } from "../infra/clock.js";
import { okValue } from "../infra/json-file.js";
import { type Command, type ParsedInput, RUN_OPTION, stringOption } from "./command-io.js";
import { type RaceData, raceData, raceText } from "./race-text.js";
import { askingText, steeringLine } from "./render.js";
import { dispatchDirOf, raceOf, runPathsOf } from "./resolve.js";
import { checkLines, errorLines, outcomeLines, recordLine } from "./result-command.js";
import { costCell, tokensCell } from "./spend-text.js";

/** The records that are done and, for each dispatch waited for that is not, what it is doing. */
export interface Waited {
  records: RecordFile[];
  /** For a steerable dispatch, also its unanswered questions and messages by state (as `status` rows). */
  running: RunningSnapshot[];
  /** `wait NAME` of a race (specs/cli.md, "A race"): the race as it stands; `records` its winner's record. */
  race?: RaceData;
}

export const waitCommand: Command<Waited> = {
  name: "wait",
  synopsis: "[<name|id>…]",
  positionals: "many",
  summary:
    "Blocks until every named dispatch (default: every live one of the run, and every recorded one whose record was not read yet) has a record, or with --any " +
    "until the first does — for a chain of attempts (--fallback), its last attempt — and prints the records " +
    "and, for each one still running, what it is doing. Exit 0 when all printed records are ok, 1 otherwise, " +
    "124 on timeout.",
  json: "{records: [record.json…], running: [a snapshot of each still running]}",
  options: {
    run: RUN_OPTION,
    any: { type: "boolean", description: "return when the first of them is recorded" },
    timeout: {
      type: "string",
      value: "<d>",
      description: "give up after this long (exit 124), e.g. 50s",
      default: "wait as long as it takes",
    },
  },
  async handler(input) {
    const timeoutText = stringOption(input, "timeout");
    const timeoutMs = timeoutText === undefined ? null : parseDuration("--timeout", timeoutText);
    const race = raceAmong(input);
    if (race !== null) return waitForRace(input, race, timeoutMs);
    // Without names: every live dispatch of the run, and every recorded one whose record was not yet read
    // (a script that dispatches and then waits may come after they all ended).
    const dirs =
      input.positionals.length > 0
        ? [...new Set(input.positionals.map((ref) => dispatchDirOf(input, ref)))]
        : (await overview(runPathsOf(input)))
            .filter((r) => r.state !== "recorded" || r.next !== null || r.unread)
            .map((r) => r.dir);
    if (dirs.length === 0) {
      const run = runPathsOf(input).run;
      return {
        data: { records: [], running: [] },
        text: `nothing to wait for: every dispatch of run ${run} is recorded and its record read (catherd status --all)\n`,
      };
    }
    const result = await awaitRecords(dirs, { any: input.values.any === true, timeoutMs });
    for (const { dir } of result.records) markSeen(dir, systemClock.wallNow());
    const records = result.records.map((r) => r.record);
    const run = runPathsOf(input);
    // Read once it returns: waiting reads nothing of a dispatch's conversation, and changes nothing.
    const running = result.pending.map((view) => runningSnapshot(run, view, systemClock));
    const allOk = records.length > 0 && records.every((r) => r.status === "ok");
    const lines = records.flatMap((r) => [
      recordLine(r),
      ...outcomeLines(r).map((l) => `  ${l}`),
      ...checkLines(r).map((l) => `  ${l}`),
      ...(r.steering === undefined ? [] : [`  ${steeringLine(r.steering)}`]),
      ...errorLines(r, systemClock.wallNow().getTime(), { tail: false }).map((l) => `  ${l}`),
    ]);
    if (result.timedOut) lines.push(`timed out with ${result.pending.length} still running`);
    lines.push(...running.map(snapshotLine));
    return {
      data: { records, running },
      text: `${lines.join("\n")}\n`,
      exitCode: result.timedOut ? WAIT_TIMEOUT_EXIT : allOk ? 0 : 1,
    };
  },
};

/**
 * The race among the names waited for, or null for none. A race is waited for alone: its answer is the
 * race's, not a record's.
 */
function raceAmong(input: ParsedInput): RaceRead | null {
  const races = input.positionals.map((ref) => raceOf(input, ref));
  const race = races.find((r) => r !== null) ?? null;
  if (race === null || input.positionals.length === 1) return race;
  throw new CatherdError(
    "E_INPUT_INVALID",
    `${race.race.name} is a race: wait for it alone (its answer is the race's, not a record's)`,
    { fix: `catherd wait ${race.race.name}, then wait for the others` },
  );
}

/** `wait NAME` of a race: until it is decided; exit 0 with a winner (`--pick all`: any passed), 124 on timeout. */
async function waitForRace(
  input: ParsedInput,
  read: RaceRead,
  timeoutMs: number | null,
): Promise<{ data: Waited; text: string; exitCode: number }> {
  const settled = await awaitRace(runPathsOf(input), read, { timeoutMs });
  const race = raceData(read, settled);
  const record = race.winner === null ? null : okValue(readFolderJson(race.winner.dir, FILES.record));
  if (race.winner !== null) markSeen(race.winner.dir, systemClock.wallNow());
  const text = `${raceText(race)}${settled.timedOut ? "timed out before the race was decided\n" : ""}`;
  return {
    data: { records: record === null ? [] : [record], running: [], race },
    text,
    exitCode: settled.timedOut ? WAIT_TIMEOUT_EXIT : raceExitCode(settled),
  };
}

/**
 * One line about a dispatch still running, its spend so far against its caps: "fix-tests running 3m12s
 * [41k/50k tokens, ~$0.12]: tool open 40s: cargo build".
 */
function snapshotLine(s: RunningSnapshot): string {
  const age = s.secs === null ? "" : ` ${formatDuration(s.secs * 1000)}`;
  // A heavy slot says more than the tool call that runs `catherd lock`: `doing` names it then.
  // An agent waiting for an answer waits for someone: that first.
  const doing =
    s.asking != null
      ? `: ${askingText(s.asking, (s.questions ?? 1) - 1)}`
      : s.heavy === null && s.openToolCall !== null
        ? `: tool open ${formatDuration(s.openToolCall.openSecs * 1000)}: ${s.openToolCall.label}`
        : s.doing === null
          ? ""
          : `: ${s.doing}`;
  const spent =
    s.spend === null
      ? ""
      : ` [${tokensCell(s.spend)} tokens${["-", "?"].includes(costCell(s.spend)) ? "" : `, ${costCell(s.spend)}`}]`;
  return `  ${s.name ?? s.dispatchId} ${s.state}${attemptSuffix(s)}${age}${spent}${doing}`;
}

/** " (attempt 2, claude-code)" for a chain's later attempt, "" for a first one. */
export function attemptSuffix(s: Pick<RunningSnapshot, "attempt" | "backend">): string {
  return s.attempt > 1 ? ` (attempt ${s.attempt}, ${s.backend ?? "?"})` : "";
}
