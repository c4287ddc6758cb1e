import { backendFor } from "../../backends/backend-registry.js";
import type { NextStep, Rung } from "../../domain/admission/ladder.js";
import { checked } from "../../domain/checked.js";
import { CatherdError } from "../../domain/errors.js";
import { type AdmitFile, backendIdSchema, type LadderFile } from "../../domain/schemas.js";
import { parseDuration } from "../../domain/text/duration.js";
import { BACKEND_IDS } from "../../domain/vocab.js";
import { resolveExecutable } from "../../infra/which.js";
import type { Concern } from "./concern.js";
import { oneLine } from "./text.js";

// The failover ladder as a request asks for it (specs/dispatch.md, "The failover ladder"): --fallback's
// rungs and --retry-within. A chain's next attempt is made by the hand-over (queue/hand-over.ts) from
// admit.json's ladder.

/** `--retry-within` at most: the supervisor of a rate-limited attempt stays that long for its retry. */
export const MAX_RETRY_WITHIN_MS = 24 * 3600_000;

export interface RawChainInput {
  fallback?: readonly string[] | undefined;
  retryWithin?: string | undefined;
}

/** The ladder a request asks for: the rungs after the first, and how long a timed retry may wait. */
export interface LadderAsked {
  rungs: Rung[];
  retryWithinMs: number | null;
}

/** The chain a dispatch belongs to, as admission writes it into admit.json. */
export interface ChainRequest {
  /** The rungs not yet tried, in order. */
  rungs: Rung[];
  retryWithinMs: number | null;
  /** Timed retries of this attempt's rung before it. */
  retries: number;
  attempt: number;
  failoverFrom: string | null;
  /** Not to start before this time (a timed retry): it is admitted queued until then. */
  notBefore: string | null;
  /** `--thread` as the chain was given it: repeated only on the same backend. */
  thread: string | null;
  /** Repair turns left for an answer that does not fit --answer-schema; absent: 0. */
  repairs?: number;
  /** Repair turns left for a check (--verify) still red; absent: 0. */
  checkRepairs?: number;
  /** Moves to another account of the pool before this attempt; absent: 0. */
  accountMoves?: number;
}

export const chain = {
  options: {
    fallback: {
      type: "string",
      value: "<backend[:model]>[,…]",
      multiple: true,
      description:
        "when an attempt ends on a quota, rate limit, outage, login or model, the next attempt runs on the next of these",
    },
    "retry-within": {
      type: "string",
      value: "<d>",
      description:
        "when a rate limit names a time within this (at most 24h), retry the same CLI then, before falling back",
    },
  },
  fromTurn: { fallback: "place and CLI", "retry-within": "place and CLI" },
  validate(raw, { environment }) {
    const rungs = parseFallback(raw.fallback ?? [], environment);
    const retryWithinMs =
      raw.retryWithin === undefined ? null : parseDuration("--retry-within", raw.retryWithin);
    if (retryWithinMs !== null && retryWithinMs > MAX_RETRY_WITHIN_MS) {
      throw new CatherdError("E_INPUT_INVALID", `--retry-within ${raw.retryWithin} is over a day`, {
        fix: "give at most 24h",
      });
    }
    return { rungs, retryWithinMs };
  },
} satisfies Concern<RawChainInput, LadderAsked>;

/**
 * The chain of a new dispatch: attempt 1 of its ladder, or null for a dispatch that asked for none. A
 * repair turn, or a move to another account of a pool of `pool` accounts, is the next attempt of a chain:
 * a dispatch that may need one always carries a ladder.
 */
export function firstAttempt(
  { rungs, retryWithinMs }: LadderAsked,
  thread: string | null,
  { repairs, checkRepairs, pool }: { repairs: number; checkRepairs: number; pool: number },
): ChainRequest | null {
  const mayGoOn = repairs > 0 || checkRepairs > 0 || pool > 1;
  if (rungs.length === 0 && retryWithinMs === null && !mayGoOn) return null;
  return {
    rungs,
    retryWithinMs,
    retries: 0,
    attempt: 1,
    failoverFrom: null,
    notBefore: null,
    thread,
    repairs,
    ...(checkRepairs === 0 ? {} : { checkRepairs }),
  };
}

/** The chain's fields of admit.json's ladder: the rungs left, the timed retries, the repairs left. */
export function chainLadder(
  link: ChainRequest,
): Pick<LadderFile, "rungs" | "retryWithinMs" | "retries" | "repairs" | "checkRepairs" | "accountMoves"> {
  return {
    rungs: link.rungs,
    retryWithinMs: link.retryWithinMs,
    retries: link.retries,
    ...(link.repairs === undefined || link.repairs === 0 ? {} : { repairs: link.repairs }),
    ...(link.checkRepairs === undefined || link.checkRepairs === 0
      ? {}
      : { checkRepairs: link.checkRepairs }),
    ...(link.accountMoves === undefined || link.accountMoves === 0
      ? {}
      : { accountMoves: link.accountMoves }),
  };
}

/** admit.json's place of an attempt in its chain: attempt 1 of none for a dispatch without a ladder. */
export function chainAdmit(link: ChainRequest | null): Pick<AdmitFile, "attempt" | "failoverFrom"> {
  return { attempt: link?.attempt ?? 1, failoverFrom: link?.failoverFrom ?? null };
}

/** The chain's next link: the step's ladder, one attempt on, following the recorded attempt `admit`. */
export function nextLink(admit: AdmitFile, step: NextStep, thread: string | null): ChainRequest {
  return {
    rungs: step.ladder.rungs,
    retryWithinMs: step.ladder.retryWithinMs,
    retries: step.ladder.retries,
    attempt: (admit.attempt ?? 1) + 1,
    failoverFrom: admit.dispatchId,
    notBefore: step.notBefore,
    thread,
    repairs: step.ladder.repairs,
    ...(step.ladder.checkRepairs === undefined ? {} : { checkRepairs: step.ladder.checkRepairs }),
    ...(step.ladder.accountMoves === undefined ? {} : { accountMoves: step.ladder.accountMoves }),
  };
}

/**
 * `--fallback claude-code:claude-sonnet-4-5,gemini` (repeatable, comma-separated): the rungs of the
 * ladder, each a CLI backend with an optional model, its executable found now (CATHERD_<B>_BIN, else
 * PATH) so that a rung that could never start is refused before anything is written. `exec` is no rung:
 * its command is the dispatch's own.
 */
function parseFallback(values: readonly string[], environment: NodeJS.ProcessEnv): Rung[] {
  const rungs = values.flatMap((v) => v.split(",")).map((item) => parseRung(item.trim(), environment));
  if (rungs.length > 8) {
    throw new CatherdError("E_INPUT_INVALID", `--fallback has ${rungs.length} rungs`, {
      fix: "give at most 8",
    });
  }
  return rungs;
}

function parseRung(text: string, environment: NodeJS.ProcessEnv): Rung {
  const fix = `give --fallback <backend>[:<model>][,…], backend one of ${BACKEND_IDS.filter((b) => b !== "exec").join(", ")}`;
  const refuse = (why: string) =>
    new CatherdError("E_INPUT_INVALID", `--fallback ${JSON.stringify(text.slice(0, 80))} ${why}`, { fix });
  const colon = text.indexOf(":");
  const id = colon === -1 ? text : text.slice(0, colon);
  const model = colon === -1 ? null : text.slice(colon + 1);
  const parsed = checked(backendIdSchema, id, () => refuse("is not a CLI backend"));
  if (parsed === "exec") throw refuse("is not a CLI backend");
  if (model !== null) checked(oneLine, model, () => refuse("has no model after the colon"));
  const backend = backendFor(parsed);
  const wanted = environment[backend.binEnv] ?? backend.defaultBin;
  // Not found here, it keeps its name: readiness refuses it here, or its host answers for it (agent.ts).
  const bin = resolveExecutable(wanted, environment.PATH ?? "") ?? wanted;
  return { backend: backend.id, model, bin };
}
