import { backendFor } from "../../backends/backend-registry.js";
import { CatherdError } from "../../domain/errors.js";
import { MAX_MESSAGE_BYTES, type MessageFile, type MessageState } from "../../domain/steering/inbox.js";
import { readEntry } from "../../folder/inbox-files.js";
import { writeMessage } from "../../folder/inbox-send.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { type Clock, systemClock } from "../../infra/clock.js";
import { waitUntil, watchFolders } from "../../infra/wait-until.js";
import { inspectDispatch } from "../read/inspect.js";
import { steerSupport } from "../request/steer-input.js";
import { checkedText } from "./text.js";

// `catherd send` and the MCP `send` tool (specs/steering.md, "The inbox"): a message into a running
// steerable dispatch's inbox/, which its supervisor gives the CLI. Returns at once with the message's id
// (or, with `wait`, once the CLI took it). A dispatch that has ended is followed up instead (the caller
// does that: `endedTurn` says so); one that cannot take messages is refused, saying why and what can.

export interface SendRequest {
  text: string;
  interrupt: boolean;
  /** Who sends, as inbox/ records it: "catherd send (pid 123)", "mcp (pid 456)". */
  from: string;
}

export interface SentMessage {
  message: MessageFile;
  dir: string;
  dispatchId: string;
  name: string | null;
  /** Its state when `send` returned: queued, or (with wait) delivered, acted or failed. */
  state: MessageState;
  why: string | null;
}

/**
 * The refusal of a message over MAX_MESSAGE_BYTES, from any source (`what`: "the message", "--file x",
 * "the message on stdin"), with its size when it is known (a stream is read no further than a bounded way
 * past the limit, so its size is not).
 */
export function messageTooLong(what: string, size: number | null): CatherdError {
  const limit = `the ${MAX_MESSAGE_BYTES}-byte (64 KiB) limit of a message`;
  return new CatherdError(
    "E_INPUT_INVALID",
    `${what} ${size === null ? "is" : `is ${size} bytes,`} over ${limit}`,
    {
      fix: "send a shorter message: put long material in a file in the work tree and name it in the message",
    },
  );
}

/** A message to a dispatch whose last turn has ended: it becomes a follow-up (the caller starts it). */
export class EndedTurn extends Error {
  constructor(
    readonly dir: string,
    readonly shown: string,
  ) {
    super(`${shown} has ended`);
  }
}

/**
 * Writes the message into the dispatch's inbox. Throws EndedTurn for a recorded dispatch (no --keep-open
 * window left: its agent is gone), E_NOT_STEERABLE for one not started steerable or a backend catherd
 * cannot talk to.
 */
export async function sendMessage(
  dir: string,
  request: SendRequest,
  options: { wait?: boolean; timeoutMs?: number; clock?: Clock } = {},
): Promise<SentMessage> {
  const clock = options.clock ?? systemClock;
  const bytes = Buffer.byteLength(request.text);
  if (bytes > MAX_MESSAGE_BYTES) throw messageTooLong("the message", bytes);
  const text = checkedText("the message", request.text, MAX_MESSAGE_BYTES);
  const view = inspectDispatch(dir);
  const name = view.admit?.name ?? null;
  const shown = name ?? view.dispatchId;
  const ended = view.state === "recorded" || view.state === "exited" || view.exit !== null;
  if (ended) throw endedTurn(dir, shown, request.interrupt);
  const backend = view.spec?.backend ?? view.admit?.backend ?? null;
  if (backend !== null && backendFor(backend).steer === undefined) {
    throw new CatherdError("E_NOT_STEERABLE", `${shown} cannot take messages: ${steerSupport(backend)}`, {
      fix:
        backend === "exec"
          ? "give the command its input another way (a file it reads)"
          : `follow it up once it ends: catherd dispatch --follow-up ${shown} --brief …`,
    });
  }
  if (view.spec === null || view.spec.steer === undefined) {
    throw new CatherdError("E_NOT_STEERABLE", `${shown} was not started steerable`, {
      fix: `dispatch with --steerable (or --keep-open) to talk to an agent while it runs; follow this one up once it ends: catherd dispatch --follow-up ${shown} --brief …`,
    });
  }
  const message = await writeMessage(dir, { text, interrupt: request.interrupt, from: request.from }, () =>
    clock.wallNow(),
  );
  // It ended while we looked: nothing was written, and the message follows it up as any other would.
  if (message === null) throw endedTurn(dir, shown, request.interrupt);
  const sent: SentMessage = { message, dir, dispatchId: view.dispatchId, name, state: "queued", why: null };
  if (options.wait !== true) return sent;
  const timeoutMs = options.timeoutMs ?? 60_000;
  return { ...sent, ...(await waitForDelivery({ dir, shown, id: message.id, timeoutMs }, clock)) };
}

/** A message to an ended dispatch: a follow-up (EndedTurn), or refused with --interrupt. */
function endedTurn(dir: string, shown: string, interrupt: boolean): Error {
  if (!interrupt) return new EndedTurn(dir, shown);
  return new CatherdError("E_NOT_STEERABLE", `${shown} has ended: there is no turn to interrupt`, {
    fix: `send it without --interrupt: it becomes a follow-up (catherd dispatch --follow-up ${shown})`,
  });
}

/**
 * Waits until the CLI took the message or it failed (a dispatch that ends fails what it did not deliver);
 * E_TIMEOUT past the limit, saying where the dispatch stands.
 */
async function waitForDelivery(
  sent: { dir: string; shown: string; id: string; timeoutMs: number },
  clock: Clock,
): Promise<{ state: MessageState; why: string | null }> {
  const { dir, shown, id, timeoutMs } = sent;
  const settled = await waitUntil(
    () => {
      const entry = readEntry(dir, id);
      if (entry.state !== "queued") {
        const last = entry.receipt?.history.at(-1);
        return { state: entry.state, why: last?.why ?? null };
      }
      return undefined;
    },
    {
      clock,
      deadline: clock.now() + timeoutMs,
      pollMs: 500,
      watch: watchFolders([fileIn(dir, FILES.inbox)]),
    },
  );
  if (settled !== undefined) return settled;
  const state = inspectDispatch(dir, { clock }).state;
  const where =
    state === "queued"
      ? `${shown} is still queued in its run, and the message waits for it to start`
      : `${shown} is ${state}`;
  throw new CatherdError(
    "E_TIMEOUT",
    `message ${id} was not delivered within ${Math.round(timeoutMs / 1000)} s: ${where}`,
    { fix: `it stays queued: catherd show ${shown} says where it stands` },
  );
}
