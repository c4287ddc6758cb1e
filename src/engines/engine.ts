import type { CliLogin } from "../domain/cli-login.js";
import type { CatherdError } from "../domain/errors.js";
import type { AdmitPlacement, PlacementFile } from "../domain/schemas.js";
import type { EnginePhase } from "../domain/state/supervisor-judgement.js";
import type { EndingErrorCode, EngineName, ErrorKind, ExitReason } from "../domain/vocab.js";
import type { Clock } from "../infra/clock.js";

// The seam every placement engine implements (specs/architecture.md, "Engines"; specs/placement.md). A
// dispatch placed on an engine is admitted here as any other; its supervisor — the very program a local
// launch starts — is then handed to the engine, and placement.json names what the engine took. Everything
// outside an engine's own folder speaks only this interface, through the registry (registry.ts): readers
// ask it what it knows of the supervisors it placed, cancel asks it to end one that never came up, and a
// supervisor asks it whether it is the one placed and how the engine is ending it. An engine's code is
// loaded only for a dispatch placed on it.

/** A supervisor the engine took, as it stood right after the submission. */
export interface Submitted {
  engine: EngineName;
  /** The engine's name for what it took (a Slurm job id), as placement.json says it. */
  jobId: string;
  cluster: string | null;
  /** `queued`: it waits in the engine's queue; `running`: it has its node. */
  state: "queued" | "running";
  /** The engine's reason for a queued one (`Licenses`, `Resources`, `Priority`, …), else null. */
  reason: string | null;
  node: string | null;
}

/** A placed supervisor's end as catherd records it, in the engine's words. */
export interface EngineEnding {
  reason: ExitReason;
  kind: ErrorKind;
  /** exit.json's `error.code` for it: the exit reason, or the code of a loss or an OOM kill. */
  code: EndingErrorCode;
  /** The engine's state as it spells it (CANCELLED, TIMEOUT, NODE_FAIL, …), for `error.engine`. */
  state: string;
  words: string;
}

/**
 * What the engine said of one supervisor it placed: its phase with the engine's words (and, pending, the
 * engine's reason; running, where) and the record it would get if its supervisor left none — `started`
 * when the folder shows the supervisor came up, `unstarted` when it never did; null while the engine has
 * not ended it. Or the engine did not answer.
 */
export type EngineSight =
  | {
      kind: "known";
      phase: EnginePhase;
      words: string;
      reason: string | null;
      node: string | null;
      ending: { started: EngineEnding | null; unstarted: EngineEnding | null };
    }
  | { kind: "unreachable"; error: CatherdError };

/**
 * The options a dispatch gives its engine as they are (`--slurm-opt`): the flag that takes them, its help,
 * and the check of one, which throws E_INPUT_INVALID for an option that would break the folder protocol.
 */
export interface EngineOptions {
  flag: string;
  description: string;
  check(option: string): string;
}

/**
 * The target an engine takes after its name and a colon (`ssh:HOST`): how help names it, and its check,
 * which throws E_INPUT_INVALID for a target the engine cannot use safely (it returns the target as used).
 * An engine without one takes its name alone; one with one needs it.
 */
export interface EngineTarget {
  value: string;
  check(target: string): string;
}

/** Where a dispatch is about to be placed: catherd's home (on storage the engine's hosts share) and the target. */
export interface PlacementWhere {
  home: string;
  target: string | null;
}

/** A CLI an engine checks where it places the supervisor (`readiness`): plain data, no backend module. */
export interface CliAsked {
  /** The backend's id: the answer names the CLI by it. */
  id: string;
  /** Its executable as this host resolved it, tried first there (a shared install); null: none here. */
  here: string | null;
  /** The name looked up on the PATH of the user's login shell there when `here` is not there. */
  name: string;
  /** The arguments that print its version; empty: none asked. */
  versionArgs: readonly string[];
  /** Where its login lives; null: it has none to check. */
  login: CliLogin | null;
}

/** What an engine found of one CLI where it places the supervisor: its host's words, judged by the caller. */
export interface CliThere {
  id: string;
  /** Its executable there; null: not found. */
  path: string | null;
  /** `here`: at this host's own path; `PATH`: on the login shell's PATH there. */
  via: "here" | "PATH" | null;
  /** Its version's last lines (bounded) and exit code there (null: no end in time); null: not asked. */
  version: { words: string; code: number | null } | null;
  /** The login found there: a file's path or a variable's name (never its value); null: none. */
  login: { kind: "file" | "variable"; where: string } | null;
}

/** What readiness asks of the host: the supervisor as this host runs it (node, program), the CLIs. */
export interface ReadinessAsked {
  supervisor: { node: string; program: string };
  clis: readonly CliAsked[];
}

/** One check of where a supervisor would be placed, as `doctor` shows it: what, ready or not, the words, the fix. */
export interface PlaceCheck {
  what: string;
  ok: boolean;
  detail: string;
  fix: string | null;
}

/**
 * What an engine that places the supervisor on another host found there, in one look: its checks in
 * order (the client here, the host answering, catherd's home shared, node, catherd), the first refusal
 * among them as admission would throw it (else null), and each CLI asked (none when the host was not
 * reached). `host` is the host's name as the engine gives it.
 */
export interface PlaceReadiness {
  host: string;
  checks: PlaceCheck[];
  problem: CatherdError | null;
  clis: CliThere[];
}

export interface Engine {
  readonly name: EngineName;
  /**
   * Whether this host can place a supervisor on the engine now; else the refusal to admit with
   * (E_ENGINE_MISSING, E_ENGINE_UNCONFIGURED, E_ENGINE_TIMEOUT, E_ENGINE_REFUSED), each with its fix.
   * Asked before admission: an engine that cannot take a job leaves no failed dispatch behind. An engine
   * that places the supervisor on another host checks there that it sees `where.home`
   * (E_PLACEMENT_UNSHARED).
   */
  unusable(where: PlacementWhere): Promise<CatherdError | null>;
  /**
   * For an engine that places the supervisor on another host: everything `unusable` checks, node and
   * catherd found there as its start finds them, and the CLIs asked as they are there (found, their version, their login), in one bounded look. Asked instead
   * of `unusable` and of this host's own readiness: the CLI runs there. Never throws. Absent: the
   * supervisor's CLI is this host's (Slurm's nodes share its install), checked here.
   */
  readiness?(where: PlacementWhere, asked: ReadinessAsked): Promise<PlaceReadiness>;
  /**
   * Hands `command` (the supervisor program on the folder) to the engine for the dispatch in `dir` and
   * writes placement.json once the engine took it. Throws the engine's CatherdError when it refuses or
   * cannot be asked; placement.json is not written then (the caller records the dispatch).
   */
  submit(dir: string, asked: AdmitPlacement, command: readonly string[], clock: Clock): Promise<Submitted>;
  /**
   * What the engine says of the supervisors it placed, by folder: one call for all. Never throws: an
   * engine that does not answer is `unreachable` for each.
   */
  sights(placed: ReadonlyMap<string, PlacementFile>): Promise<Map<string, EngineSight>>;
  /** Ends what the engine took for the supervisor of `dir` that has not come up. Throws the engine's refusal. */
  cancel(placement: PlacementFile, dir: string): Promise<void>;
  /** In a supervisor: whether this very process is the one the placement names (not merely inside one). */
  isThisProcess(placement: PlacementFile): boolean;
  /** In a placed supervisor: the node it runs on, as the engine names it. */
  nodeOfThisProcess(): string;
  /**
   * In a placed supervisor that got a signal: how the engine is ending it, in the engine's words, or null
   * when the engine is not (the signal came from elsewhere).
   */
  endingOfThisProcess(dir: string, placement: PlacementFile, clock: Clock): Promise<EngineEnding | null>;
}
