import { z } from "zod";
import { randomSuffix } from "../ids.js";
import { isoTime, loose, schemaField } from "../schema-parts.js";

// The inbox of a steerable dispatch (specs/steering.md): the messages sent to its running agent and the
// states each moves through. Pure: no clock, no file.

/**
 * A message's states. `queued`: written to inbox/, not yet given to the CLI. `delivered`: the CLI took it
 * (its echo of the message). `acted`: the first model or tool event after that. `failed`: it never will
 * be (the dispatch ended first, the CLI refused it), with why.
 */
export const MESSAGE_STATES = ["queued", "delivered", "acted", "failed"] as const;
export type MessageState = (typeof MESSAGE_STATES)[number];

/** The moves a message may make: forward only, and nothing after `acted` or `failed`. */
const NEXT: Readonly<Record<MessageState, readonly MessageState[]>> = {
  queued: ["delivered", "failed"],
  delivered: ["acted", "failed"],
  acted: [],
  failed: [],
};

export function canMove(from: MessageState, to: MessageState): boolean {
  return NEXT[from].includes(to);
}

/** Why a message still queued when its dispatch ended is failed: it never will be delivered. */
export function undeliveredWhy(cancelled: boolean): string {
  return cancelled ? "the dispatch was cancelled" : "the dispatch ended before it was delivered";
}

/** Whether a message in this state still waits for something: delivery, or the agent's first move on it. */
export function isOpen(state: MessageState): boolean {
  return state === "queued" || state === "delivered";
}

/** The longest message catherd takes: it goes to the CLI in one line of its input. */
export const MAX_MESSAGE_BYTES = 64 * 1024;

/** inbox/<id>.json: what the sender wrote, once, atomically; nobody rewrites it. */
export const messageFileSchema = loose({
  schema: schemaField,
  id: z.string().min(1),
  text: z.string().min(1),
  /** `send --interrupt`: the current turn is stopped first and the message starts the next one. */
  interrupt: z.boolean(),
  sentAt: isoTime,
  /** Who sent it, as a person reads it: `catherd send` (pid), or the MCP server. */
  from: z.string().min(1),
});
export type MessageFile = z.infer<typeof messageFileSchema>;

const stateChange = loose({
  state: z.enum(MESSAGE_STATES),
  at: isoTime,
  why: z.string().optional(),
});
export type StateChange = z.infer<typeof stateChange>;

/** inbox/<id>.state.json: the supervisor's receipts for one message, every change in order. */
export const receiptFileSchema = loose({
  schema: schemaField,
  id: z.string().min(1),
  state: z.enum(MESSAGE_STATES),
  history: z.array(stateChange).min(1),
});
export type ReceiptFile = z.infer<typeof receiptFileSchema>;

/**
 * The receipt after `change` (a move to its state, at its time, with why), or null when the move is not
 * allowed (the state only moves forward, so a second supervisor that sees an older state cannot take a
 * message back).
 */
export function advance(receipt: ReceiptFile | null, id: string, change: StateChange): ReceiptFile | null {
  const { state: to, at } = change;
  const from = receipt?.state ?? "queued";
  if (receipt !== null && !canMove(from, to)) return null;
  if (receipt === null && to === "queued") return null;
  const history: StateChange[] = receipt?.history ?? [{ state: "queued", at }];
  // queued → acted passes through delivered: the agent acted on what it took.
  const steps: StateChange[] =
    from === "queued" && to === "acted"
      ? [
          { state: "delivered", at },
          { state: "acted", at },
        ]
      : [{ state: to, at, ...(change.why === undefined ? {} : { why: change.why }) }];
  return { schema: 1, id, state: to, history: [...history, ...steps] };
}

const STAMP_LENGTH = "20261202T053012345Z".length;

/** The time stamp of a message id, `20261202T053012345Z`: UTC to the millisecond. */
function stampOf(at: Date): string {
  return at.toISOString().replace(/[-:.]/g, "");
}

function stampTime(stamp: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/.exec(stamp);
  if (m === null) return null;
  const [year, month, day, hour, minute, second, milli] = m.slice(1).map(Number) as number[];
  return Date.UTC(year ?? 0, (month ?? 1) - 1, day, hour, minute, second, milli);
}

/**
 * A message id, `20261202T053012345Z-k3x9qa`, that sorts after every id in `existing` (the inbox as the
 * sender saw it): a message written after another is delivered after it, even when the clock did not move
 * or moved back. Two senders writing at the same moment are ordered by their random suffixes.
 */
export function makeMessageId(at: Date, existing: readonly string[], random: () => number): string {
  let ms = at.getTime();
  for (const id of existing) {
    const t = stampTime(id.slice(0, STAMP_LENGTH));
    if (t !== null && t >= ms) ms = t + 1;
  }
  return `${stampOf(new Date(ms))}-${randomSuffix(random)}`;
}

const MESSAGE_ID = /^\d{8}T\d{9}Z-[0-9a-z]{6}$/;

export function isMessageId(value: string): boolean {
  return MESSAGE_ID.test(value);
}

/** The order messages are delivered in: by id (time written, then suffix). */
export function deliveryOrder<T extends { id: string }>(messages: readonly T[]): T[] {
  return [...messages].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
