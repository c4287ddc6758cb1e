import * as fs from "node:fs";
import * as path from "node:path";
import {
  advance,
  deliveryOrder,
  isMessageId,
  type MessageFile,
  type MessageState,
  makeMessageId,
  messageFileSchema,
  type ReceiptFile,
  receiptFileSchema,
} from "../domain/inbox.js";
import { SCHEMA_VERSION } from "../domain/schema-parts.js";
import { createJsonExclusive, makeDir, writeJsonAtomic } from "../infra/atomic.js";
import { readJsonFile } from "../infra/json-file.js";
import { lockWithin } from "../infra/lock.js";
import { FILES } from "./layout.js";

// inbox/ of a dispatch folder (specs/steering.md, "The inbox"): `<id>.json`, a message as its sender wrote
// it (created exclusively, complete before its name appears), and `<id>.state.json`, the supervisor's
// receipts. Each file has one writer: the sender writes a message once, the supervisor its receipt.

const MESSAGE_SUFFIX = ".json";
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

/** How long a sender waits for another to have put its message in place; a dead holder is stale after. */
const INBOX_LOCK_STALE_MS = 10_000;
const INBOX_LOCK_WAIT_MS = 10_000;

/**
 * Writes a new message; returns it (with its id). Under inbox.lock, the id is picked after every message
 * already there and its file put in place before another sender picks one: ids appear in inbox/ in the
 * order they sort, so a supervisor that gives what it finds, in id order, never gives a message before
 * one with a smaller id (specs/steering.md, "The inbox").
 */
export async function writeMessage(
  dir: string,
  body: Pick<MessageFile, "text" | "interrupt" | "from">,
  now: () => Date,
  random: () => number = Math.random,
): Promise<MessageFile> {
  const inbox = inboxDir(dir);
  makeDir(inbox);
  const release = await lockWithin({
    lockPath: path.join(dir, FILES.inboxLock),
    staleMs: INBOX_LOCK_STALE_MS,
    waitMs: INBOX_LOCK_WAIT_MS,
  });
  try {
    for (let attempt = 0; ; attempt++) {
      const at = now();
      const id = makeMessageId(at, messageIds(dir), random);
      const message: MessageFile = { schema: SCHEMA_VERSION, id, ...body, sentAt: at.toISOString() };
      if (createJsonExclusive(path.join(inbox, `${id}${MESSAGE_SUFFIX}`), message)) return message;
      if (attempt >= 20) throw new Error(`cannot find a free message id in ${inbox}`);
    }
  } finally {
    await release();
  }
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

/**
 * Moves a message on; false when the move is not allowed (it only moves forward). The supervisor is the
 * receipts' only writer.
 */
export function moveMessage(
  dir: string,
  entry: Pick<InboxEntry, "id" | "receipt">,
  to: MessageState,
  at: Date,
  why?: string,
): ReceiptFile | null {
  const next = advance(entry.receipt, entry.id, to, at.toISOString(), why);
  if (next === null) return null;
  writeJsonAtomic(path.join(inboxDir(dir), `${entry.id}${RECEIPT_SUFFIX}`), next);
  return next;
}
