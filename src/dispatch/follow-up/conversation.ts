import * as fs from "node:fs";
import * as path from "node:path";
import { isValidId } from "../../domain/ids.js";
import type { DispatchState, Status } from "../../domain/vocab.js";
import { attemptDirs, lastAttemptDir } from "../../folder/chain.js";
import { FILES, fileIn } from "../../folder/layout.js";
import { readFolderJson } from "../../folder/read.js";
import { okValue } from "../../infra/json-file.js";
import { LATEST_FILE } from "../../infra/paths.js";
import { inspectDispatch } from "../read/inspect.js";

// A conversation (specs/dispatch.md, "Following up"): the turns of one name linked by admit.json's
// `followUpOf`, read only. The link back is derived here, never written: an earlier turn's follow-up is
// the folder of the same name whose admit.json names it — so no recorded folder ever changes.

/**
 * One turn of a conversation, as `show` and `result --conversation` list it. A turn is a chain of attempts
 * (a failover, a retry, a repair of its answer): its record is its last attempt's, its brief and its
 * admission its first attempt's — the person's own brief, never catherd's repair text.
 */
export interface Turn {
  /** 1 for the conversation's first turn. */
  turn: number;
  /** The turn's last attempt: the one a follow-up continues. */
  dispatchId: string;
  dir: string;
  /** Every attempt of the turn, first to last (one for a turn that needed no other). */
  attempts: string[];
  /** When its first attempt was admitted. */
  admittedAt: string | null;
  state: DispatchState;
  /** The record's status; null while the turn is not recorded. */
  status: Status | null;
  /** The first non-blank line of its first attempt's brief, at most 200 characters; null without a brief. */
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

/** What a conversation is read from: each admitted folder of the name, and each turn's follow-up. */
interface Links {
  admits: Map<string, { followUpOf: string | undefined; admittedAt: string }>;
  followers: Map<string, string>;
}

/** Every turn of the conversation `dir` is a turn of, first to last (one, for a dispatch never followed up). */
export function conversationOf(dir: string): Turn[] {
  const folder = path.dirname(dir);
  const links = linksIn(folder);
  // A turn is a chain: the follow-up link is on its first attempt, and a follow-up continues its last.
  const seen = new Set<string>();
  let first = attemptIds(dir);
  for (let i = 0; i < MAX_TURNS; i++) {
    for (const id of first) seen.add(id);
    const before = links.admits.get(first[0] as string)?.followUpOf;
    if (before === undefined || !links.admits.has(before) || seen.has(before)) break;
    first = attemptIds(path.join(folder, before));
  }
  const chains: string[][] = [first];
  for (let i = 0; i < MAX_TURNS; i++) {
    const next = links.followers.get((chains.at(-1) as string[]).at(-1) as string);
    if (next === undefined || chains.some((c) => c.includes(next))) break;
    chains.push(attemptIds(path.join(folder, next)));
  }
  return chains.map((ids, index) => turnOf(folder, ids, index + 1, links));
}

/** The ids of the attempts of the chain `dir` belongs to, first to last. */
function attemptIds(dir: string): string[] {
  return attemptDirs(lastAttemptDir(dir)).map((d) => path.basename(d));
}

/** The admit.json of each folder of a name, and each turn's follow-up (the newest, were there two). */
function linksIn(folder: string): Links {
  const admits: Links["admits"] = new Map();
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
    admits.set(id, { followUpOf: admit.followUpOf, admittedAt: admit.admittedAt });
    if (admit.followUpOf !== undefined) followers.set(admit.followUpOf, id);
  }
  return { admits, followers };
}

function turnOf(folder: string, ids: readonly string[], turn: number, links: Links): Turn {
  const firstId = ids[0] as string;
  const lastId = ids.at(-1) as string;
  const dir = path.join(folder, lastId);
  const view = inspectDispatch(dir);
  const first = links.admits.get(firstId);
  return {
    turn,
    dispatchId: view.dispatchId,
    dir,
    attempts: [...ids],
    admittedAt: first?.admittedAt ?? view.admit?.admittedAt ?? null,
    state: view.state,
    status: view.record?.status ?? null,
    brief: briefLine(path.join(folder, firstId)),
    reply: view.record?.reply ?? null,
    thread: view.record?.thread ?? null,
    followUpOf: first?.followUpOf ?? null,
    followedUpBy: links.followers.get(lastId) ?? null,
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
