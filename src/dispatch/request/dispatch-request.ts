import type { OptionSpec } from "../../domain/option-def.js";
import type { SandboxPolicy } from "../../domain/sandbox/sandbox.js";
import type { LadderFile, SteerSettings, WorktreePlan } from "../../domain/schemas.js";
import type { SpendCaps } from "../../domain/spend/budget.js";
import { type AccountRequest, accountChoice, type RawAccountInput } from "./account-input.js";
import { type AgentRequest, agent, type RawAgentInput, validateAgent } from "./agent.js";
import { type AnswerRequest, answer } from "./answer-input.js";
import { type BriefRequest, brief, type RawBriefInput } from "./brief.js";
import { type RawCapsInput, spendCaps } from "./caps-input.js";
import { type ChainRequest, chain, firstAttempt, type RawChainInput } from "./chain.js";
import { type Concern, type ConcernContext, flagGiven, type Recorded, type Successor } from "./concern.js";
import { type IsolationRequest, isolation, type RawIsolationFlags } from "./isolation-input.js";
import { type LimitsRequest, limits, type RawLimitsInput } from "./limits.js";
import { type NotifyRequest, notify, type RawNotifyInput } from "./notify.js";
import { type PlacementRequest, placement, type RawPlacementFlags } from "./placement.js";
import { type RaceRequest, type RawRaceInput, racing } from "./race-input.js";
import { type RawRunCapsInput, type RunCapsRequest, runCaps } from "./run-caps.js";
import { type RawSandboxFlags, type SandboxRequest, sandbox } from "./sandbox-input.js";
import { type RawSteerInput, steering } from "./steer-input.js";
import { type RawTagInput, type TagRequest, tagging } from "./tag-input.js";
import { invalid } from "./text.js";
import { type CheckRequest, checking, type RawCheckInput } from "./verify-input.js";

// The dispatch request: the composition of its concerns' parts (concern.ts, specs/dispatch.md, "A
// request's concerns"), each validated by its own module, in the order a refusal names the first problem.

export { briefTooLong, MAX_BRIEF_BYTES } from "./brief.js";
export type { ChainRequest } from "./chain.js";
export { MAX_RETRY_WITHIN_MS } from "./chain.js";
export { ID_RULE } from "./text.js";

/** A dispatch request, every field validated; nothing has touched the disk yet. */
export interface DispatchRequest
  extends AgentRequest,
    LimitsRequest,
    RunCapsRequest,
    NotifyRequest,
    AccountRequest,
    TagRequest,
    CheckRequest,
    RaceRequest {
  /** The brief as given (brief.ts composes brief.md from it at staging); null for exec without one. */
  brief: BriefRequest["brief"];
  /** `--lock-hint`: brief.md gets the line about `catherd lock`. */
  lockHint?: boolean;
  /** `--outcome`: brief.md gets the outcome contract, and the record reads the outcome line. */
  outcome?: boolean;
  isolation: IsolationRequest;
  /** --max-tokens and --max-cost: the caps the supervisor stops the agent at. */
  caps: SpendCaps;
  /**
   * Where its supervisor runs (specs/placement.md). `placement.placement` is `--placement` as given until
   * the dispatch use case resolves it (the run's, the environment's, else local) before admission.
   */
  placement: PlacementRequest;
  /**
   * `--fallback` and `--retry-within`, and where this attempt stands in its chain (specs/dispatch.md, "The
   * failover ladder"); null for a dispatch given neither (it is attempt 1 of a chain of one).
   */
  chain: ChainRequest | null;
  /** `--answer-schema` and `--repair` (answer-input.ts); absent or null: no schema. */
  answer?: AnswerRequest | null;
  /** `--follow-up NAME`: the turn this dispatch continues (dispatch/follow-up/); absent or null: none. */
  followUp?: FollowUpOf | null;
  /** `--steerable`, `--keep-open`, `--on-question` (steer-input.ts); absent or null: not steerable. */
  steer?: SteerSettings | null;
  /**
   * `--sandbox`, `--run-sandbox` and what shapes the sandbox (sandbox-input.ts), as given; the dispatch use
   * case resolves it against the run into `sandboxPolicy` before admission.
   */
  sandbox: SandboxRequest;
  /** The sandbox the agent runs in, once resolved; absent or null: none. */
  sandboxPolicy?: SandboxPolicy | null;
}

/** The turn a follow-up continues (dispatch/follow-up/), as admission and its supervisor need it. */
export interface FollowUpOf {
  /** The continued turn's dispatch id: admit.json's `followUpOf`. */
  dispatchId: string;
  dir: string;
  /** The conversation's private worktree (the first turn's `--worktree`), worked in again; null: none. */
  worktree: WorktreePlan | null;
}

/**
 * The flags as given, each under its argumentName (`max-parallel` → `maxParallel`), with the brief read and the
 * answer schema checked (readAnswer: the one asynchronous check). An engine's own flag comes under its
 * name (`slurmOpt`), read by the placement concern.
 */
export interface RawDispatchInput
  extends RawAgentInput,
    RawBriefInput,
    RawLimitsInput,
    RawRunCapsInput,
    RawIsolationFlags,
    RawChainInput,
    RawCapsInput,
    RawNotifyInput,
    RawSteerInput,
    RawSandboxFlags,
    RawPlacementFlags,
    RawAccountInput,
    RawTagInput,
    RawCheckInput,
    RawRaceInput {
  /** `--answer-schema`/`--repair`, already read and checked (answer-input.ts: the check is async). */
  answer?: AnswerRequest | null;
}

/** Validates every input of `catherd dispatch` before anything is written (specs/dispatch.md §1). */
export function validateDispatch(raw: RawDispatchInput): DispatchRequest {
  const agent = validateAgent(raw);
  const context: ConcernContext = {
    backend: agent.backend,
    cwd: agent.cwd,
    envNames: Object.keys(agent.env),
    environment: raw.environment,
    run: agent.run,
  };
  const asked = {
    ...agent,
    ...partOf(brief, raw, context),
    ...partOf(limits, raw, context),
    ...partOf(runCaps, raw, context),
    ...partOf(isolation, raw, context),
    ...partOf(placement, raw, context),
    ...partOf(accountChoice, raw, context),
    ...partOf(tagging, raw, context),
  };
  refuseQueuedPassEnv(asked);
  const ladder = partOf(chain, raw, context);
  const answered = partOf(answer, raw, context);
  const checked = partOf(checking, raw, context);
  return {
    ...asked,
    ...answered,
    ...checked,
    chain: firstAttempt(ladder, agent.thread, {
      repairs: answered.answer?.repair ?? 0,
      checkRepairs: checked.verify?.repairs ?? 0,
      pool: asked.accounts?.pool.length ?? 1,
    }),
    ...partOf(spendCaps, raw, context),
    ...partOf(notify, raw, context),
    ...partOf(steering, raw, context),
    ...partOf(sandbox, raw, context),
    ...partOf(racing, raw, context),
  };
}

/** What a chain's next attempt takes from its step, not from the recorded attempt (queue/hand-over.ts). */
export type DecidedByStep = "backend" | "model" | "bin" | "chain";

/**
 * The concerns a successor takes over, each by its `carry` (concern.ts), in the order validateDispatch
 * composes them: the one list for a chain's next attempt and a follow-up alike.
 */
const CARRYING: readonly CarryingConcern[] = [
  agent,
  brief,
  limits,
  runCaps,
  isolation,
  placement,
  accountChoice,
  tagging,
  answer,
  checking,
  spendCaps,
  steering,
  sandbox,
  racing,
];

/**
 * A chain's next attempt's request, less what its step decides: every concern's part as its carry gives
 * it from the recorded attempt, whose ladder names each field a next attempt repeats. A repair's brief
 * and thread are the hand-over's own too.
 */
export function nextAttemptRequest(
  recorded: Recorded & { ladder: LadderFile },
  to: Successor & { kind: "next-attempt" },
): Omit<DispatchRequest, DecidedByStep> {
  const parts = CARRYING.map((concern) => concern.carry(recorded, to));
  return Object.assign({}, ...parts) as Omit<DispatchRequest, DecidedByStep>;
}

interface CarryingConcern {
  options: OptionSpec;
  anew?: readonly string[];
  carry(recorded: Recorded, to: Successor): object;
}

/**
 * A follow-up's request: validated from its flags (its core from its turn's: agent-successor.ts,
 * flagsOfTurn), with what each concern carries to it from the turn where the follow-up gives none of the
 * concern's flags that ask anew.
 */
export function followUpRequest(raw: RawDispatchInput, recorded: Recorded, to: Successor): DispatchRequest {
  const carried = CARRYING.filter((concern) => !asksAnew(concern, raw)).map((concern) =>
    concern.carry(recorded, to),
  );
  return Object.assign(validateDispatch(raw), ...carried) as DispatchRequest;
}

function asksAnew(concern: CarryingConcern, raw: RawDispatchInput): boolean {
  return (concern.anew ?? Object.keys(concern.options)).some((flag) => flagGiven(raw, flag));
}

/** One concern's part of the request. */
function partOf<Raw, Part>(concern: Concern<Raw, Part>, raw: Raw, context: ConcernContext): Part {
  return concern.validate(raw, context);
}

/**
 * A queued dispatch is started by whichever catherd process promotes it — most often another dispatch's
 * supervisor, with that dispatcher's environment — and values are never written down.
 */
function refuseQueuedPassEnv({ queue, isolation }: { queue: boolean; isolation: IsolationRequest }): void {
  if (!queue || isolation.passEnv.length === 0) return;
  throw invalid(
    "--pass-env",
    "cannot wait in the queue: a queued dispatch is started by whichever catherd process promotes it, whose environment is not this one",
    "dispatch without --queue (and again on E_ADMIT_CAPACITY or E_ADMIT_OVERLAP), or drop --pass-env",
  );
}
