import * as fs from "node:fs";
import * as path from "node:path";
import { SCHEMA_VERSION } from "../domain/schema-parts.js";
import { type MessageFile, makeMessageId, undeliveredWhy } from "../domain/steering/inbox.js";
import { createJsonExclusive, makeDir } from "../infra/atomic.js";
import { lockWithin } from "../infra/lock.js";
import { failQueued, inboxDir, MESSAGE_SUFFIX, messageIds } from "./inbox-files.js";
import { FILES, fileIn } from "./layout.js";

// A sender's side of inbox/ (specs/steering.md, "The inbox"), apart from the readers' (inbox.ts): only
// `send` takes the lock, and a reader of the inbox loads no lock code.

/** How long a sender waits for another to have put its message in place; a dead holder is stale after. */
const INBOX_LOCK_STALE_MS = 10_000;
const INBOX_LOCK_WAIT_MS = 10_000;

/**
 * Writes a new message; returns it (with its id), or null when the dispatch has ended (its exit.json is
 * there) and nothing was written. Under inbox.lock, the id is picked after every message already there
 * and its file put in place before another sender picks one: ids appear in inbox/ in the order they
 * sort, so a supervisor that gives what it finds, in id order, never gives a message before one with a
 * smaller id (specs/steering.md, "The inbox"). The end is read under the same lock that closeInbox takes.
 */
export async function writeMessage(
  dir: string,
  body: Pick<MessageFile, "text" | "interrupt" | "from">,
  now: () => Date,
  random: () => number = Math.random,
): Promise<MessageFile | null> {
  const inbox = inboxDir(dir);
  makeDir(inbox);
  const release = await takeInboxLock(dir);
  try {
    if (fs.existsSync(fileIn(dir, FILES.exit))) return null;
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

/**
 * Closes the inbox of a dispatch that has ended (its exit.json is written, its record not yet): every
 * message still queued is failed, with why. Under inbox.lock, which a sender holds from its look at
 * exit.json to its message's file: a message is either here to be failed, or its sender saw the end and
 * followed the dispatch up instead — none is left queued. Never in the record's way: a lock that cannot
 * be had is gone through without, and a disk that refuses the receipts leaves the messages queued (the
 * record counts them so).
 */
export async function closeInbox(dir: string, cancelled: boolean, at: Date): Promise<void> {
  if (!fs.existsSync(inboxDir(dir))) return;
  const release = await takeInboxLock(dir).catch(() => null);
  try {
    failQueued(dir, undeliveredWhy(cancelled), at);
  } catch {
    // A full or read-only disk: the record is written all the same, and says what is still queued.
  } finally {
    await release?.().catch(() => undefined);
  }
}

function takeInboxLock(dir: string) {
  return lockWithin({
    lockPath: path.join(dir, FILES.inboxLock),
    staleMs: INBOX_LOCK_STALE_MS,
    waitMs: INBOX_LOCK_WAIT_MS,
  });
}
