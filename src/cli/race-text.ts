import { formatDuration } from "../domain/text/duration.js";
import type { RaceRead } from "../folder/race.js";
import type { AttemptStanding, Settled } from "../folder/race-standing.js";
import { cell, count } from "./render.js";

// A race as `wait NAME`, `result NAME` and `cancel NAME` print it (specs/cli.md, "A race"): one row per
// attempt, and the winner with its branch and its patches; `--json` the same as data.

/** The winner as an orchestrator takes it over: its attempt, its last turn's folder, branch and patches. */
export interface RaceWinner {
  attempt: number;
  name: string;
  dispatchId: string;
  dir: string;
  branch: string | null;
  /** Every turn's changes.patch, first to last: the first holds the attempt's work, a repair's its fix. */
  patches: string[];
}

/** A race as data (`--json` of wait, result and cancel). */
export interface RaceData {
  name: string;
  raceId: string;
  run: string;
  pick: string;
  decided: boolean;
  decidedAt: string | null;
  /** Who wrote the decision: the winning attempt's supervisor, or a reader. */
  decidedBy: string | null;
  winner: RaceWinner | null;
  attempts: AttemptStanding[];
}

export function raceData({ race }: RaceRead, settled: Settled): RaceData {
  const { decision, standings } = settled;
  const won = standings.find((s) => s.attempt === decision?.winner) ?? null;
  return {
    name: race.name,
    raceId: race.raceId,
    run: race.run,
    pick: race.pick,
    decided: decision !== null,
    decidedAt: decision?.decidedAt ?? null,
    decidedBy: decision?.by ?? null,
    winner:
      won === null
        ? null
        : {
            attempt: won.attempt,
            name: won.name,
            dispatchId: won.dispatchId,
            dir: won.dir,
            branch: won.branch,
            patches: won.patches,
          },
    attempts: standings,
  };
}

const HEADER = ["attempt", "backend / model", "check", "tokens", "cost", "wall", "lines", "outcome"];
const WIDTHS = [14, 28, 18, 7, 9, 7, 12, 0];

/** The race as text: what it is and how it stands, a row per attempt, then the winner. */
export function raceText(data: RaceData): string {
  const head = `race ${data.name} (${data.raceId}, --pick ${data.pick}): ${decidedWords(data)}`;
  const rows = [HEADER, ...data.attempts.map((a) => rowOf(a, data.winner?.attempt ?? null))].map((cells) =>
    cells
      .map((c, i) => ((WIDTHS[i] ?? 0) === 0 ? c : cell(c, WIDTHS[i] as number)))
      .join(" ")
      .trimEnd(),
  );
  return `${[head, ...rows, ...winnerLines(data)].join("\n")}\n`;
}

function decidedWords(data: RaceData): string {
  if (!data.decided) return "not decided yet";
  if (data.winner !== null) return `won by ${data.winner.name}`;
  if (data.pick === "all") return "every attempt has ended (--pick all decides nothing)";
  return "no attempt passed its check";
}

function rowOf(a: AttemptStanding, winner: number | null): string[] {
  const repairs = a.repairs === 0 ? "" : `, ${a.repairs} repair${a.repairs === 1 ? "" : "s"}`;
  const outcome = a.ended ? `${a.status ?? "?"}${a.kind === null ? "" : ` ${a.kind}`}` : "going on";
  return [
    `${a.name}${a.attempt === winner ? " *" : ""}`,
    `${a.backend}${a.model === null ? "" : ` ${a.model}`}`,
    `${a.check ?? "-"}${repairs}`,
    a.tokens === null ? "-" : count(a.tokens),
    a.costUsd === null ? "-" : `$${a.costUsd.toFixed(4)}`,
    a.wallMs === null ? "-" : formatDuration(a.wallMs),
    a.added === null || a.removed === null ? "-" : `+${a.added} -${a.removed}`,
    outcome,
  ];
}

function winnerLines({ winner }: RaceData): string[] {
  if (winner === null) return [];
  return [
    `winner: ${winner.name} (${winner.dispatchId})${winner.branch === null ? "" : ` on branch ${winner.branch}`}`,
    ...winner.patches.map((p) => `  patch: ${p}`),
  ];
}

/** One line about a race, for clients that show text: "race fix decided: won by fix.2". */
export function raceLine(data: RaceData): string {
  return `race ${data.name} ${decidedWords(data)}`;
}
