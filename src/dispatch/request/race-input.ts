import {
  type AlsoAttempt,
  DEFAULT_PICK,
  MAX_RACE_ATTEMPTS,
  MIN_RACE_ATTEMPTS,
  parseAlso,
  RACE_PICKS,
  type RacePick,
  raceNameProblem,
} from "../../domain/race/race-rules.js";
import type { AdmitRace } from "../../domain/schemas.js";
import { BACKEND_IDS } from "../../domain/vocab.js";
import { type Concern, flagGiven } from "./concern.js";
import { invalid, oneLine, shownValue } from "./text.js";

// `dispatch --attempts N`, `--also BACKEND[:MODEL]` and `--pick` (specs/dispatch.md, "A race"): one brief,
// several attempts at once, each in its own worktree, judged by the check (`--verify`). This concern checks
// the flags before anything is written; the attempts' requests are made from the request it belongs to
// (race-request.ts), and each attempt's admit.json names its race (`race`), which its chain carries.

export interface RawRaceInput {
  attempts?: string | undefined;
  also?: readonly string[] | undefined;
  pick?: string | undefined;
  /** Read, not owned: a race is judged by the check, and each attempt needs a worktree of its own. */
  name?: string | undefined;
  worktree?: boolean | undefined;
  thread?: string | undefined;
  followUp?: string | undefined;
}

/** A race as asked: attempts of the dispatch's own CLI, one per `--also`, and how the winner is picked. */
export interface RaceAsked {
  /** Attempts on the dispatch's own CLI (`--attempts`; 1 when only `--also` is given). */
  same: number;
  also: AlsoAttempt[];
  pick: RacePick;
}

export interface RaceRequest {
  /** The race asked for; null: a plain dispatch. */
  raceAsked: RaceAsked | null;
  /** On one attempt's request: the race it belongs to, as its admit.json names it; absent: none. */
  race?: AdmitRace | null;
}

const AGENT_BACKENDS = BACKEND_IDS.filter((b) => b !== "exec");

export const racing = {
  options: {
    attempts: {
      type: "string",
      value: "<n>",
      integer: true,
      description: `race: this many attempts of the brief on this CLI at once, each in its own worktree, judged by --verify (with --also: ${MIN_RACE_ATTEMPTS}-${MAX_RACE_ATTEMPTS} attempts in all); the attempts are named <name>.1, <name>.2, …`,
    },
    also: {
      type: "string",
      value: "<backend[:model]>",
      multiple: true,
      description: "race: one more attempt on this CLI (and model), repeatable",
    },
    pick: {
      type: "string",
      value: "<first-pass|cheapest-pass|all>",
      choices: RACE_PICKS,
      description:
        "race: the first attempt whose check passes wins and the others are cancelled; or the passing one that cost least once all ended; or all run and nothing is picked",
      default: DEFAULT_PICK,
    },
  },
  validate(raw, { backend }): RaceRequest {
    const given = raw.attempts !== undefined || (raw.also ?? []).length > 0;
    if (!given) {
      if (raw.pick !== undefined) throw raceInvalid("--pick", "needs a race", "add --attempts <n> or --also");
      return { raceAsked: null };
    }
    const asked = {
      same: raw.attempts === undefined ? 1 : attemptsOf(raw.attempts),
      also: (raw.also ?? []).map(alsoOf),
      pick: pickOf(raw.pick),
    };
    refuseWithout(raw, backend.id, asked.same + asked.also.length);
    return { raceAsked: asked };
  },
  toAdmit: ({ race }) => (race == null ? {} : { race }),
  // A chain's next attempt (a repair turn) is still its race's attempt; a follow-up is a conversation's.
  carry: (recorded, to): Partial<RaceRequest> =>
    to.kind === "next-attempt"
      ? { raceAsked: null, race: recorded.admit?.race ?? null }
      : { raceAsked: null },
} satisfies Concern<RawRaceInput, RaceRequest>;

function raceInvalid(flag: string, message: string, fix: string) {
  return invalid(flag, message, fix);
}

function attemptsOf(text: string): number {
  if (!/^[0-9]{1,2}$/.test(text) || Number(text) < 1 || Number(text) > MAX_RACE_ATTEMPTS) {
    throw raceInvalid(
      "--attempts",
      `${shownValue(text)} is not a whole number from 1 to ${MAX_RACE_ATTEMPTS}`,
      `give --attempts 2 to ${MAX_RACE_ATTEMPTS} (or 1 with --also)`,
    );
  }
  return Number(text);
}

function alsoOf(text: string): AlsoAttempt {
  const also = parseAlso(text);
  const fix = `give --also <backend>[:<model>], the backend one of ${AGENT_BACKENDS.join(", ")} (--also gemini, --also claude-code:claude-sonnet-4-5)`;
  if (!(AGENT_BACKENDS as readonly string[]).includes(also.backend)) {
    throw raceInvalid(
      "--also",
      `${shownValue(text)}: ${shownValue(also.backend)} is not an agent's CLI`,
      fix,
    );
  }
  if (also.model !== null && !oneLine.safeParse(also.model).success) {
    throw raceInvalid("--also", `${shownValue(text)}: the model must be one line of 1-200 characters`, fix);
  }
  return also;
}

function pickOf(text: string | undefined): RacePick {
  if (text === undefined) return DEFAULT_PICK;
  if ((RACE_PICKS as readonly string[]).includes(text)) return text as RacePick;
  throw raceInvalid(
    "--pick",
    `${shownValue(text)} is not a pick`,
    `give --pick ${RACE_PICKS.join(", --pick ")}`,
  );
}

/**
 * What a race cannot go without, or with: the check that judges it, a worktree per attempt, an agent (a
 * command has no brief to race), a thread of its own per attempt, a name with room for the suffixes, and
 * 2 to 8 attempts in all.
 */
function refuseWithout(raw: RawRaceInput, backend: string, total: number): void {
  if (total < MIN_RACE_ATTEMPTS || total > MAX_RACE_ATTEMPTS) {
    throw raceInvalid(
      "--attempts",
      `and --also make ${total} attempts: a race has ${MIN_RACE_ATTEMPTS} to ${MAX_RACE_ATTEMPTS}`,
      total < MIN_RACE_ATTEMPTS
        ? "give --attempts 2 or more, or add --also; a single attempt is a plain dispatch with --verify"
        : `give at most ${MAX_RACE_ATTEMPTS} attempts in all`,
    );
  }
  if (!flagGiven(raw, "verify")) {
    throw raceInvalid(
      "a race",
      "needs --verify: the check is what judges its attempts",
      'add --verify "<command that exits 0 when the work is right>" (e.g. --verify "npm test")',
    );
  }
  if (raw.worktree !== true) {
    throw raceInvalid(
      "a race",
      "needs --worktree: each attempt works in a worktree of its own",
      "add --worktree",
    );
  }
  if (backend === "exec") {
    throw raceInvalid("a race", "is of agents: exec runs one command", "give --backend an agent's CLI");
  }
  if (raw.thread !== undefined || raw.followUp !== undefined) {
    throw raceInvalid(
      "a race",
      "starts each attempt on a thread of its own: it takes no --thread or --follow-up",
      "leave out --thread and --follow-up (follow up the winner by its name afterwards)",
    );
  }
  const problem = raw.name === undefined ? null : raceNameProblem(raw.name, total);
  if (problem !== null) throw raceInvalid("--name", problem, "give a shorter --name");
}
