import * as fs from "node:fs";
import { backendFor } from "../../backends/backend-registry.js";
import { resumeProblem } from "../../backends/resume.js";
import type { Backend } from "../../backends/types.js";
import { CatherdError } from "../../domain/errors.js";
import { isValidId } from "../../domain/ids.js";
import type { AdmitFile, RecordFile, SpecFile } from "../../domain/schemas.js";
import type { AccessLevel } from "../../domain/vocab.js";
import { handOverPending } from "../../folder/chain.js";
import { raceNamed } from "../../folder/race.js";
import { catherdHome, type RunPaths, runPaths } from "../../infra/paths.js";
import { inspectDispatch } from "../read/inspect.js";
import { flagsOfTurn } from "../request/agent-successor.js";
import { flagGiven } from "../request/concern.js";
import { FROM_THE_TURN } from "../request/dispatch-options.js";
import {
  type DispatchRequest,
  followUpRequest,
  ID_RULE,
  type RawDispatchInput,
} from "../request/dispatch-request.js";
import { newestTurnDir } from "./turn.js";

// `dispatch --follow-up NAME` (specs/dispatch.md, "Following up"): the request of a new turn of NAME's
// conversation, made from its newest turn's folder — backend, model, effort, access, folder (its
// worktree itself), executable and thread — with what the caller gave on top where a thread allows it.
// Every refusal comes here, before anything is written; admission judges the turn again under the lock.

export type { FollowUpOf } from "../request/dispatch-request.js";

/**
 * How the follow-up was asked for, which its refusals name: `dispatch --follow-up NAME`, or a `send` to
 * an ended dispatch (whose user typed no --follow-up).
 */
export type FollowUpAsked = "follow-up" | "send";

/**
 * The request of a follow-up of `name`'s newest turn in the run `raw.run`: validateDispatch's checks
 * and its own. Throws what refuses it (E_INPUT_INVALID, E_DISPATCH_NOT_FOUND, E_ADMIT_DUPLICATE for a
 * live turn), in the words of how it was `asked`; nothing is written either way.
 */
export function validateFollowUp(
  raw: RawDispatchInput,
  name: string,
  home: string = catherdHome(),
  asked: FollowUpAsked = "follow-up",
): DispatchRequest {
  if (!isValidId(name))
    throw invalid(
      `--follow-up ${JSON.stringify(name.slice(0, 80))} is not a name: ${ID_RULE}`,
      "give the name of a recorded dispatch (catherd status --all)",
    );
  refuseTakenFlags(raw, name);
  if (!isValidId(raw.run)) {
    throw invalid(
      `--run ${JSON.stringify(raw.run.slice(0, 80))} is not a run's name: ${ID_RULE.replace("a name", "a run's name")}`,
      "give a name such as fix-tests or nightly.2",
    );
  }
  const lead = asked === "send" ? `${name} has ended and cannot be followed up` : `--follow-up ${name}`;
  const turn = recordedTurn(runPaths(home, raw.run), name, { lead, asked });
  const access = turn.admit.access ?? turn.admit.ladder?.request.access ?? null;
  refuseOtherThread(raw, name, turn.backend.id, access);
  if (!fs.statSync(turn.admit.cwd, { throwIfNoEntry: false })?.isDirectory()) {
    throw invalid(
      `${lead}: the folder its turn worked in, ${turn.admit.cwd}, is gone`,
      `dispatch it anew with --name ${name} (a worktree removed by catherd clean is not made again)`,
    );
  }
  return nextTurn(raw, turn, access);
}

/** The newest turn of a conversation, recorded, with the files and the backend a follow-up reads. */
interface RecordedTurn {
  name: string;
  dispatchId: string;
  dir: string;
  admit: AdmitFile;
  spec: SpecFile;
  record: RecordFile;
  backend: Backend;
}

/** How a refusal of the follow-up begins, and how it was asked for. */
interface Asking {
  lead: string;
  asked: FollowUpAsked;
}

/**
 * The newest turn of `name` in `run`, recorded and handed over, on a backend with a thread that can be
 * resumed; else the refusal (E_DISPATCH_NOT_FOUND, E_NOT_RECORDED, E_ADMIT_DUPLICATE, E_INPUT_INVALID).
 */
function recordedTurn(run: RunPaths, name: string, { lead, asked }: Asking): RecordedTurn {
  const dir = newestTurnDir(run, name);
  if (dir === null) {
    const race = raceNamed(run, name);
    throw new CatherdError(
      "E_DISPATCH_NOT_FOUND",
      `${lead}: run ${run.run} has no dispatch named ${name}${race === null ? "" : `: ${race}`}`,
      {
        fix:
          race === null
            ? `follow up a recorded dispatch of the run (catherd status --run ${run.run} --all), or dispatch it anew with --name ${name}`
            : `follow up one attempt, the winner's (catherd result ${name} names it): --follow-up ${name}.1`,
      },
    );
  }
  const turn = inspectDispatch(dir);
  const { record, admit, spec } = turn;
  if (turn.duty === "record") {
    // Ended without its record (its supervisor died): a reader records it; a follow-up only reads.
    throw new CatherdError(
      "E_NOT_RECORDED",
      `${lead}: its turn ${turn.dispatchId} ended without its record`,
      {
        fix: `let a reader record it (catherd show ${name}), then ${asked === "send" ? "send" : "follow up"} again`,
      },
    );
  }
  if (turn.state !== "recorded" || record === null || handOverPending(dir, record))
    throw stillLive(name, turn.dispatchId, turn.state, asked);
  if (admit === null || spec === null) {
    throw invalid(
      `${lead}: its newest turn ${dir} has no readable admit.json or spec.json`,
      `catherd show ${name} names the problem`,
    );
  }
  const backend = resumableBackend(record, { lead, name, dispatchId: turn.dispatchId });
  return { name, dispatchId: turn.dispatchId, dir, admit, spec, record, backend };
}

/** The turn's backend, when it has a thread that can be continued; else E_INPUT_INVALID saying why. */
function resumableBackend(
  record: RecordFile,
  { lead, name, dispatchId }: { lead: string; name: string; dispatchId: string },
): Backend {
  const backend = backendFor(record.backend);
  if (backend.checkThread === undefined) {
    throw invalid(
      `${lead}: its backend, ${backend.id}, has no thread to continue`,
      `dispatch it anew: catherd dispatch --backend ${backend.id} --name ${name} …`,
    );
  }
  const unresumable = resumeProblem(backend, record.thread);
  if (unresumable === null) return backend;
  const why =
    record.startedAt === null
      ? `it never started (${dispatchId} ended ${record.status} before its CLI ran)`
      : `${unresumable} (its turn ${dispatchId} ended ${record.status})`;
  throw invalid(
    `${lead}: ${why}`,
    `dispatch it anew with --name ${name}: there is no conversation to continue`,
  );
}

/**
 * The follow-up's request: the caller's flags validated on top of what the turn fixes (agent-successor.ts,
 * flagsOfTurn), with what the concerns carry to a follow-up (steerable and sandboxed as the turn was) unless
 * the caller says anew (dispatch-request.ts, followUpRequest).
 */
function nextTurn(raw: RawDispatchInput, turn: RecordedTurn, access: AccessLevel | null): DispatchRequest {
  const { admit, spec, backend } = turn;
  const recorded = { spec, ladder: admit.ladder ?? null };
  const to = { kind: "follow-up", backend } as const;
  const request = followUpRequest(flagsOfTurn(raw, { ...turn, access }), recorded, to);
  return {
    ...request,
    followUp: { dispatchId: turn.dispatchId, dir: turn.dir, worktree: spec.worktree ?? null },
  };
}

/** E_ADMIT_DUPLICATE for a turn not recorded yet: a running agent cannot be told more (yet). */
export function stillLive(
  name: string,
  dispatchId: string,
  state: string,
  asked: FollowUpAsked = "follow-up",
): CatherdError {
  const still = `its turn ${dispatchId} is still ${state === "recorded" ? "handing its chain over" : state}`;
  if (asked === "send") {
    return new CatherdError("E_ADMIT_DUPLICATE", `${name} cannot be followed up yet: ${still}`, {
      fix: `wait for it (catherd wait ${name}), then send the message again`,
    });
  }
  return new CatherdError("E_ADMIT_DUPLICATE", `--follow-up ${name}: ${still}`, {
    fix: `talk to it while it runs (catherd send ${name} "…", if it was dispatched --steerable), wait for it (catherd wait ${name}) and follow up then, or cancel it (catherd cancel ${name})`,
  });
}

function refuseTakenFlags(raw: RawDispatchInput, name: string): void {
  if (raw.name !== undefined && raw.name !== name) {
    throw invalid(
      `--name ${raw.name} with --follow-up ${name}: a follow-up keeps its conversation's name`,
      `leave --name out (the follow-up is named ${name}), or dispatch anew without --follow-up`,
    );
  }
  for (const [flag, fixed] of Object.entries(FROM_THE_TURN)) {
    if (!flagGiven(raw, flag)) continue;
    throw invalid(
      `--${flag} with --follow-up: a follow-up continues its turn's ${fixed} (one or the other)`,
      `leave --${flag} out, or dispatch without --follow-up`,
    );
  }
}

/** A --backend or --access other than the thread's: the CLIs keep the access a thread started with. */
function refuseOtherThread(
  raw: RawDispatchInput,
  name: string,
  backend: string,
  access: AccessLevel | null,
): void {
  if (raw.backend !== undefined && raw.backend !== backend) {
    throw invalid(
      `--backend ${raw.backend} with --follow-up ${name}: its thread is a ${backend} thread`,
      `leave --backend out, or dispatch anew on ${raw.backend} with another --name`,
    );
  }
  if (raw.access !== undefined && raw.access !== (access ?? undefined)) {
    const had = access === null ? "the CLI's own access (no --access)" : `--access ${access}`;
    throw invalid(
      `--access ${raw.access} with --follow-up ${name}: its thread started with ${had}, which the CLI keeps`,
      "leave --access out, or dispatch anew with another --name",
    );
  }
}

function invalid(message: string, fix: string): CatherdError {
  return new CatherdError("E_INPUT_INVALID", message, { fix });
}
