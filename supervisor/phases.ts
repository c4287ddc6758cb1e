import { CatherdError } from "../src/domain/errors.js";
import { failure, type SupervisorLog } from "./log.js";
import { pauseAt } from "./test-hooks.js";

// The supervisor's life (specs/supervisor.md, "Phases"): the one list of the phases a supervisor goes
// through, in order, each with what holds when it is entered, the phases it may follow, and the named
// points within it where CATHERD_TEST_ONLY_PAUSE_AT can freeze it. The supervisor enters a phase only
// through enterPhase, which names it in supervisor.log; the test hook's points derive from this list.

/** The first phase of a supervisor's life follows this: nothing of it happened yet. */
export const LIFE_START = "start";

/** The phases, in the order a supervisor goes through them. */
export const PHASES = [
  {
    name: "given",
    holds: "a standby supervisor has its folder from whoever started it; it has claimed nothing",
    follows: [LIFE_START],
    points: [],
  },
  {
    name: "claimed",
    holds: "supervisor.lock is held, supervisor.json names this process; no agent exists",
    follows: [LIFE_START, "given"],
    points: [
      /** The spec read; the reserve not made, nothing of the agent's place prepared. */
      "before-spawn",
      /** A sandboxed dispatch's sandbox raised (fence.json, its proxy listening); bubblewrap not started. */
      "sandbox-raised",
      /** bubblewrap started; its sandbox not yet said up: the bridge may be starting its listeners. */
      "sandbox-starting",
      /** The agent's process exists (a sandboxed one waits at its gate); proc.json not written. */
      "after-spawn",
    ],
  },
  {
    name: "adopted",
    holds:
      "supervisor.json names this process as an adopter (adoptions + 1), supervisor.lock is held, the agent proc.json names was alive at the take-over",
    follows: [LIFE_START, "given"],
    points: [],
  },
  {
    name: "started",
    holds: "proc.json names the agent (pid, start time, group); a sandboxed agent still waits at its gate",
    follows: ["claimed"],
    points: [],
  },
  {
    name: "watching",
    holds: "the agent runs, named in proc.json, and the loop watches it by the spec's limits",
    follows: ["started", "adopted"],
    points: [
      /** A steerable dispatch's protocol opening (codex: initialize … thread/start) went to the channel. */
      "handshake-written",
      /** A steerable dispatch's message went to the CLI's channel, its receipt not yet written. */
      "message-written",
      /** A question's answer went to the CLI's channel, questions/<q>.delivered.json not yet written. */
      "answer-written",
    ],
  },
  {
    name: "stopping",
    holds: "the ending is decided; the stop sequence runs on whatever of the dispatch may still run",
    follows: ["claimed", "adopted", "started", "watching"],
    points: [
      /** SIGTERM has reached the agent's group, SIGKILL has not. */
      "term-sent",
    ],
  },
  {
    name: "exited",
    holds: "nothing of the dispatch runs; exit.json holds the ending; record.json is not written",
    follows: ["stopping"],
    points: [],
  },
  {
    name: "verifying",
    holds:
      "exit.json holds the turn's ending; the check (--verify) runs, or the run a supervisor before it began is waited for; record.json is not written",
    follows: [LIFE_START, "given", "exited"],
    points: [],
  },
  {
    name: "recorded",
    holds: "record.json is written (by this supervisor, or by a reader before it)",
    follows: ["exited", "verifying"],
    points: [],
  },
  {
    name: "after-record",
    holds: "the dispatch's files are final; the queue's promoter and a chain's hand-over run now",
    follows: ["exited", "verifying", "recorded"],
    points: [],
  },
] as const satisfies readonly Phase[];

/** One phase of the supervisor's life. */
export interface Phase {
  name: string;
  /** What is true when the supervisor enters it. */
  holds: string;
  /** The phases it may be entered from; LIFE_START when it can be the first of a life. */
  follows: readonly string[];
  /** Named moments within it, for the test hook only: never logged. */
  points: readonly string[];
}

export type PhaseName = (typeof PHASES)[number]["name"];
export type PointName = (typeof PHASES)[number]["points"][number];
/** Where CATHERD_TEST_ONLY_PAUSE_AT can freeze the supervisor: a phase's entry, or a point within one. */
export type PausePoint = PhaseName | PointName;

/** Whether a supervisor in phase `from` (null: none yet) may enter `to` next. */
export function mayEnter(from: PhaseName | null, to: PhaseName): boolean {
  const follows: readonly string[] = phaseNamed(to).follows;
  return follows.includes(from ?? LIFE_START);
}

function phaseNamed(name: PhaseName): Phase {
  const found = PHASES.find((p) => p.name === name);
  if (found === undefined) throw new TypeError(`no phase ${name}`);
  return found;
}

/**
 * The phase each supervision is in, by its log: superviseDispatch makes one log per supervision and hands
 * that one to every part of it, so that a phase call needs nothing more than the log it already has.
 */
const current = new WeakMap<SupervisorLog, PhaseName>();

/**
 * Enters `phase`: one `phase` line in supervisor.log, then the test hook's pause at it. A phase entered
 * out of order (mayEnter) is a bug of the supervisor's: it is logged as `phase-out-of-order` with
 * E_INTERNAL and its stack, and entered all the same — the agent is still stopped and recorded, and the
 * tests, which read the log, fail on the line.
 */
export function enterPhase(log: SupervisorLog, dir: string, phase: PhaseName): void {
  const from = current.get(log) ?? null;
  if (!mayEnter(from, phase)) {
    const error = new CatherdError(
      "E_INTERNAL",
      `the supervisor entered phase ${phase} from ${from ?? LIFE_START}, which it may not follow`,
    );
    log("phase-out-of-order", { code: error.code, from, phase, ...failure(error) });
  }
  current.set(log, phase);
  log("phase", { phase });
  pauseAt(phase, dir);
}
