import * as fs from "node:fs";
import { CatherdError } from "../domain/errors.js";
import { FILES, fileIn, placeOf, runOf } from "../folder/layout.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { runPaths } from "../infra/paths.js";
import { waitUntil } from "../infra/wait-until.js";
import { startDispatch } from "./dispatch.js";
import { validateFollowUp } from "./follow-up/follow-up-request.js";
import { newestTurnDir } from "./follow-up/turn.js";
import { EndedTurn, type SendRequest, type SentMessage, sendMessage } from "./steer/send.js";

// `catherd send` and the MCP `send` tool, whole (specs/steering.md, "The inbox"): the message goes into
// the dispatch's inbox while it runs, and is the brief of a follow-up turn once it has ended. Sends to
// one ended dispatch at the same moment start one follow-up: the others' messages join its inbox.

/** What a send did: the message written into an inbox, or the follow-up turn it is the brief of. */
export type SendOutcome =
  | { kind: "sent"; sent: SentMessage }
  | { kind: "followed-up"; ended: string; admitted: FollowUpStarted };

export interface FollowUpStarted {
  name: string | null;
  dispatchId: string;
  dir: string;
  queued: boolean;
}

/** Where to send: the folder the user named, and the run and home to follow up in when it is not in one. */
export interface SendTarget {
  dir: string;
  run: string;
  home: string;
}

/** How often a send that lost a follow-up to another looks again for the conversation's newest turn. */
const ROUNDS = 4;
/** How long a send waits for an ended turn's record (its supervisor writes it right after exit.json). */
const RECORD_WAIT_MS = 10_000;

/**
 * Sends `request` to the dispatch of `target`, or follows it up when it has ended. A follow-up refused
 * because another send's follow-up of the same turn won (E_ADMIT_DUPLICATE) is not an error: the message
 * goes to that newer turn instead — into its inbox while it is live (steerable, as its turn was), or as
 * the brief of the next follow-up if it has ended already.
 */
export async function sendOrFollowUp(
  target: SendTarget,
  request: SendRequest,
  options: { wait?: boolean; clock?: Clock } = {},
): Promise<SendOutcome> {
  let dir = target.dir;
  /** The turn that had ended when another send's follow-up of it won: null until one did. */
  let ended: string | null = null;
  for (let round = 1; ; round++) {
    try {
      const sent = await sendMessage(dir, request, options);
      return { kind: "sent", sent: ended === null ? sent : { ...sent, why: joinedWhy(ended, sent) } };
    } catch (error) {
      if (!(error instanceof EndedTurn)) throw error;
      try {
        return await followUp(error, request.text, target);
      } catch (refused) {
        if (round >= ROUNDS || !isDuplicate(refused)) throw refused;
        ended = error.shown;
        dir = await turnNow(error.dir, target, options.clock ?? systemClock);
      }
    }
  }
}

function joinedWhy(ended: string, sent: SentMessage): string {
  const joined = `${ended} had ended and another send followed it up: the message joins that turn, ${sent.dispatchId}`;
  return sent.why === null ? joined : `${joined}; ${sent.why}`;
}

async function followUp(ended: EndedTurn, text: string, target: SendTarget): Promise<SendOutcome> {
  const run = runOf(ended.dir) ?? runPaths(target.home, target.run);
  const request = validateFollowUp(
    { run: run.run, env: [], brief: Buffer.from(text), rest: [], environment: process.env },
    placeOf(ended.dir)?.name ?? ended.shown,
    run.home,
    "send",
  );
  const { admitted } = await startDispatch(request, { home: run.home });
  return {
    kind: "followed-up",
    ended: ended.shown,
    admitted: {
      name: admitted.name,
      dispatchId: admitted.dispatchId,
      dir: admitted.dir,
      queued: admitted.queued !== null,
    },
  };
}

/** A follow-up refused because the conversation's name is live again, or has moved on. */
function isDuplicate(refused: unknown): boolean {
  return refused instanceof CatherdError && refused.code === "E_ADMIT_DUPLICATE";
}

/**
 * The conversation's newest turn, after a follow-up of the turn in `endedDir` was refused as a duplicate:
 * another send's follow-up, when one won; else the ended turn itself, once its record is written (it had
 * ended, and its supervisor was still writing the record).
 */
async function turnNow(endedDir: string, target: SendTarget, clock: Clock): Promise<string> {
  const place = placeOf(endedDir);
  const run = runOf(endedDir) ?? runPaths(target.home, target.run);
  const newest = place === null ? null : newestTurnDir(run, place.name);
  if (newest !== null && newest !== endedDir) return newest;
  await waitUntil(() => (fs.existsSync(fileIn(endedDir, FILES.record)) ? true : undefined), {
    clock,
    deadline: clock.now() + RECORD_WAIT_MS,
    pollMs: 100,
  });
  return endedDir;
}
