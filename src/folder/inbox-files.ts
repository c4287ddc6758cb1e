import * as fs from "node:fs";
import * as path from "node:path";
import {
  advance,
  deliveryOrder,
  isMessageId,
  type MessageFile,
  type MessageState,
  messageFileSchema,
  type ReceiptFile,
  receiptFileSchema,
} from "../domain/steering/inbox.js";
import { writeJsonAtomic } from "../infra/atomic.js";
import { readJsonFile } from "../infra/json-file.js";
import { FILES } from "./layout.js";

// inbox/ of a dispatch folder (specs/steering.md, "The inbox"): `<id>.json`, a message as its sender wrote
// it (created exclusively, complete before its name appears), and `<id>.state.json`, the supervisor's
// receipts. Each file has one writer: the sender writes a message once, the supervisor its receipt.

/** A message's file name is its id and this; its receipt's, its id and RECEIPT_SUFFIX. */
export const MESSAGE_SUFFIX = ".json";
const RECEIPT_SUFFIX = ".state.json";

export function inboxDir(dir: string): string {
  return path.join(dir, FILES.inbox);
}

/** A message of the inbox with its state; `torn`: a file there that is not a message (why). */
export interface InboxEntry {
  id: string;
  message: MessageFile | null;
  torn: string | null;
  receipt: ReceiptFile | null;
  state: MessageState;
}

/** The ids of the inbox's messages, in delivery order. */
export function messageIds(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(inboxDir(dir));
  } catch {
    return [];
  }
  const ids = names
    .filter((n) => n.endsWith(MESSAGE_SUFFIX) && !n.endsWith(RECEIPT_SUFFIX))
    .map((n) => n.slice(0, -MESSAGE_SUFFIX.length))
    .filter(isMessageId);
  return deliveryOrder(ids.map((id) => ({ id }))).map((m) => m.id);
}

/** Every message of the inbox with its state, in delivery order. */
export function readInbox(dir: string): InboxEntry[] {
  return messageIds(dir).map((id) => readEntry(dir, id));
}

export function readEntry(dir: string, id: string): InboxEntry {
  const inbox = inboxDir(dir);
  const read = readJsonFile(path.join(inbox, `${id}${MESSAGE_SUFFIX}`), messageFileSchema);
  const receiptRead = readJsonFile(path.join(inbox, `${id}${RECEIPT_SUFFIX}`), receiptFileSchema);
  const receipt = receiptRead.kind === "ok" ? receiptRead.value : null;
  const message = read.kind === "ok" && read.value.id === id ? read.value : null;
  const torn =
    message !== null
      ? null
      : read.kind === "invalid"
        ? read.error.message
        : read.kind === "ok"
          ? `it names another id (${read.value.id})`
          : "it is gone";
  return { id, message, torn, receipt, state: receipt?.state ?? "queued" };
}

/** A message's move: to a state, at a time, with why (a failure says it). */
export interface Move {
  to: MessageState;
  at: Date;
  why?: string | undefined;
}

/**
 * Moves a message on: its receipt after the move, or null when the move is not allowed (it only moves
 * forward). The supervisor is the receipts' only writer.
 */
export function moveMessage(
  dir: string,
  entry: Pick<InboxEntry, "id" | "receipt">,
  move: Move,
): ReceiptFile | null {
  const { to, at, why } = move;
  const next = advance(entry.receipt, entry.id, {
    state: to,
    at: at.toISOString(),
    ...(why === undefined ? {} : { why }),
  });
  if (next === null) return null;
  writeJsonAtomic(path.join(inboxDir(dir), `${entry.id}${RECEIPT_SUFFIX}`), next);
  return next;
}

/** Fails every message still queued, with why; returns the ids it failed (the writer of receipts calls it). */
export function failQueued(dir: string, why: string, at: Date): string[] {
  const failed: string[] = [];
  for (const entry of readInbox(dir)) {
    if (entry.state !== "queued") continue;
    if (moveMessage(dir, entry, { to: "failed", at, why }) !== null) failed.push(entry.id);
  }
  return failed;
}
