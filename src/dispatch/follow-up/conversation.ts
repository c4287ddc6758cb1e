import * as fs from "node:fs";
import * as path from "node:path";
import { isValidId } from "../../domain/ids.js";
import type { DispatchState, Status } from "../../domain/vocab.js";
import { lastAttemptDir } from "../../folder/chain.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { okValue } from "../../infra/json-file.js";
import { LATEST_FILE } from "../../infra/paths.js";
import { inspectDispatch } from "../read/inspect.js";

// A conversation (specs/dispatch.md, "Following up"): the turns of one name linked by admit.json's
// `followUpOf`, read only. The link back is derived here, never written: an earlier turn's follow-up is
// the folder of the same name whose admit.json names it — so no recorded folder ever changes.

/** One turn of a conversation, as `show` and `result --conversation` list it. */
export interface Turn {
  /** 1 for the conversation's first turn. */
  turn: number;
  dispatchId: string;
  dir: string;
  admittedAt: string | null;
  state: DispatchState;
  /** The record's status; null while the turn is not recorded. */
  status: Status | null;
  /** The brief's first non-blank line, at most 200 characters; null without a brief. */
  brief: string | null;
  reply: string | null;
  thread: string | null;
  /** The turn it continues; null for the first. */
  followUpOf: string | null;
  /** The turn that continues it; null for the newest. */
  followedUpBy: string | null;
}

/** How far a conversation is followed: far more turns than anyone asks for, few enough to stop a loop. */
const MAX_TURNS = 1000;

/** Every turn of the conversation `dir` is a turn of, first to last (one, for a dispatch never followed up). */
export function conversationOf(dir: string): Turn[] {
  const folder = path.dirname(dir);
  const { followers, admits } = linksIn(folder);
  // A chain is one turn, its last attempt's: the one a follow-up continues.
  let first = path.basename(lastAttemptDir(dir));
  for (let i = 0; i < MAX_TURNS; i++) {
    const before = admits.get(first)?.followUpOf;
    if (before === undefined || !admits.has(before)) break;
    first = before;
  }
  const ids: string[] = [first];
  for (let i = 0; i < MAX_TURNS; i++) {
    const next = followers.get(ids.at(-1) as string);
    if (next === undefined || ids.includes(next)) break;
    ids.push(next);
  }
  return ids.map((id, index) => turnOf(path.join(folder, id), index + 1, followers.get(id) ?? null));
}

/** The admit.json of each folder of a name, and each turn's follow-up (the newest, were there two). */
function linksIn(folder: string) {
  const admits = new Map<string, { followUpOf: string | undefined }>();
  const followers = new Map<string, string>();
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(folder).sort();
  } catch {
    // gone: no turns but the one asked for
  }
  for (const id of entries) {
    if (id === LATEST_FILE || !isValidId(id)) continue;
    const admit = okValue(readFolderJson(path.join(folder, id), FILES.admit));
    if (admit === null) continue;
    admits.set(id, { followUpOf: admit.followUpOf });
    if (admit.followUpOf !== undefined) followers.set(admit.followUpOf, id);
  }
  return { admits, followers };
}

function turnOf(dir: string, turn: number, followedUpBy: string | null): Turn {
  const view = inspectDispatch(dir);
  return {
    turn,
    dispatchId: view.dispatchId,
    dir,
    admittedAt: view.admit?.admittedAt ?? null,
    state: view.state,
    status: view.record?.status ?? null,
    brief: briefLine(dir),
    reply: view.record?.reply ?? null,
    thread: view.record?.thread ?? null,
    followUpOf: view.admit?.followUpOf ?? null,
    followedUpBy,
  };
}

/** The first non-blank line of brief.md, cut at 200 characters. */
function briefLine(dir: string): string | null {
  let text: string;
  try {
    const fd = fs.openSync(fileIn(dir, FILES.brief), fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      const buffer = Buffer.alloc(4096);
      const n = fs.readSync(fd, buffer, 0, buffer.length, 0);
      text = buffer.subarray(0, n).toString("utf8");
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  const line = text.split("\n").find((l) => l.trim() !== "");
  if (line === undefined) return null;
  const trimmed = line.trim();
  return trimmed.length > 200 ? `${trimmed.slice(0, 200)}…` : trimmed;
}
