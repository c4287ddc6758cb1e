import * as fs from "node:fs";
import * as path from "node:path";
import { isValidId } from "../../domain/ids.js";
import { handOverPending } from "../../folder/chain.js";
import { FILES } from "../../folder/layout.js";
import { readLiveMarkers } from "../../folder/markers.js";
import { readRunFile } from "../../folder/run-file.js";
import type { Clock } from "../../infra/clock.js";
import { type FolderWatch, watchFolder } from "../../infra/folder-watch.js";
import { dispatchDir, type RunPaths } from "../../infra/paths.js";
import type { BarWire, PushWire, RowWire, RunSummaryWire } from "../wire.js";
import {
  dispatchDirById,
  dispatchDirsOf,
  foldedRows,
  promoteQueue,
  queuePositionsOf,
  readDispatch,
  stillSupervised,
} from "./dispatch-reads.js";
import { barWire, type Entry, rowWire } from "./row-wire.js";
import { budgetOf, totalTokens } from "./usage-wire.js";

// One run as the dashboard keeps it (specs/ui.md, "Live, and light"). Loaded once — a recorded dispatch
// is final, so its row is read once and kept — then kept current by change: the run's live/ folder (a
// marker per admitted, unrecorded dispatch: new dispatches appear there, recorded ones leave), run.json,
// and the folder of each live dispatch, whose state files (activity.json at most once a second, exit,
// record…) say it moved. Its output streams are not watched here: activity.json summarises them. Only
// what changed is read again. A slow poll covers what no file says: a supervisor that died, a watch that
// missed a change (NFS), a queue to promote. A dispatch is found by the name of its marker's file as the
// watch reports it, not by the marker itself: a short one's marker may be gone before the flush reads the
// folder, and the dispatch must show all the same.

/** Changes are gathered this long before the folders they name are read again. */
export const FLUSH_MS = 100;
/** Read in bites this size at load, yielding between them, so that requests are answered meanwhile. */
const LOAD_BITE = 64;
/** Every this many polls, the run's folders are listed against the rows (a minute at 5 s a poll). */
const RECONCILE_EVERY_POLLS = 12;
/** A live marker's file as the watch names it: `<dispatchId>.json`. */
const MARKER_FILE = /^([A-Za-z0-9][A-Za-z0-9._-]{0,63})\.json$/;
/** A dispatch's files whose change is news for its row. */
const STATE_FILES = new Set([
  "activity.json",
  "supervisor.json",
  "proc.json",
  "promoted.json",
  "stall.json",
  "cancel",
  "exit.json",
  "record.json",
  "next.json",
  "notify.json",
]);
/** Files whose change is news for the dispatch's own page only. */
const STREAM_FILES = new Set(["events.jsonl", "stderr.log", "events.times", "notify.log", "changes.patch"]);

export class RunModel {
  readonly entries = new Map<string, Entry>();
  readonly loaded: Promise<void>;
  loading = true;
  private readonly watchers = new Map<string, FolderWatch>();
  private readonly dirty = new Set<string>();
  private readonly streamDirty = new Set<string>();
  private markersChanged = false;
  /** Dispatches whose live marker the watch named since the last flush (it may be gone already). */
  private readonly markerIds = new Set<string>();
  /** The live markers' names as the last poll listed them. */
  private markerList = "";
  private polls = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private readonly sentRows = new Map<string, string>();
  private readonly sentBars = new Map<string, string>();
  private closed = false;
  lastChangedAt: string | null = null;

  constructor(
    readonly paths: RunPaths,
    private readonly push: (push: PushWire) => void,
    private readonly clock: Clock,
  ) {
    this.loaded = this.load();
  }

  private async load(): Promise<void> {
    this.watch(this.paths.live, (name) => this.markersMoved(name));
    this.watch(this.paths.dir, (name) => {
      if (name === "run.json" || name === "live") this.markersMoved();
    });
    const positions = queuePositionsOf(this.paths);
    const dirs = dispatchDirsOf(this.paths);
    for (let i = 0; i < dirs.length && !this.closed; i += LOAD_BITE) {
      for (const dir of dirs.slice(i, i + LOAD_BITE)) await this.read(dir, positions, false);
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.loading = false;
    this.remember();
    this.push({ type: "runs" });
  }

  /** Reads one folder again; a live one is watched, a recorded one (its chain handed on) no longer. */
  private async read(dir: string, positions: Map<string, number>, announce: boolean): Promise<void> {
    let read: Awaited<ReturnType<typeof readDispatch>>;
    try {
      read = await readDispatch(this.paths, dir, positions);
    } catch {
      return; // a folder removed meanwhile (clean)
    }
    const { view, row } = read;
    const before = this.entries.get(row.dispatchId);
    const failoverFrom = view.admit?.failoverFrom ?? view.record?.failoverFrom ?? null;
    const entry: Entry = {
      dir,
      dispatchId: row.dispatchId,
      view,
      row,
      failoverFrom,
      wire: rowWire(row, view),
      bar: barWire(row, view, row.dispatchId),
    };
    this.entries.set(row.dispatchId, entry);
    const settled = row.state === "recorded" && !handOverPending(dir, view.record);
    // A steerable dispatch's inbox/ and questions/ (its supervisor makes them) say a message moved or the
    // agent asked: news for its row ("asks: q1 …") and its page.
    const talk = [path.join(dir, FILES.inbox), path.join(dir, FILES.questions)];
    if (settled) {
      this.unwatch(dir);
      for (const sub of talk) this.unwatch(sub);
    } else {
      this.watch(dir, (name) => this.folderMoved(dir, name));
      if (view.spec?.steer !== undefined) for (const sub of talk) this.watch(sub, () => this.talkMoved(dir));
    }
    // Found recorded after the load (it came and went between two looks) ended while watched too.
    const ended = (before === undefined || before.row.state !== "recorded") && settled && row.next === null;
    if (announce && ended) {
      this.push({
        type: "ended",
        run: this.paths.run,
        dispatchId: row.dispatchId,
        name: entry.wire.name,
        status: row.status ?? "recorded",
      });
    }
  }

  private watch(target: string, onChange: (name: string | null) => void): void {
    if (this.closed || this.watchers.has(target)) return;
    const watch = watchFolder(
      target,
      () => true,
      (name) => {
        if (watch?.broken) this.unwatch(target);
        else onChange(name === "" ? null : name);
      },
    );
    // Null: not there yet (a run without live/) or not watchable; the poll covers it.
    if (watch !== null) this.watchers.set(target, watch);
  }

  private unwatch(target: string): void {
    this.watchers.get(target)?.close();
    this.watchers.delete(target);
  }

  private folderMoved(dir: string, name: string | null): void {
    if (name === null || STATE_FILES.has(name)) this.dirty.add(dir);
    else if (STREAM_FILES.has(name)) this.streamDirty.add(dir);
    else return;
    this.schedule();
  }

  private talkMoved(dir: string): void {
    this.dirty.add(dir);
    this.schedule();
  }

  private markersMoved(name: string | null = null): void {
    const id = name === null ? undefined : MARKER_FILE.exec(name)?.[1];
    if (id !== undefined) this.markerIds.add(id);
    this.markersChanged = true;
    this.schedule();
  }

  private schedule(): void {
    if (this.flushTimer !== null || this.closed) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      void this.flush();
    }, FLUSH_MS);
    this.flushTimer.unref();
  }

  /** Reads what changed and pushes the rows and bars that differ from those sent. One flush at a time. */
  async flush(): Promise<void> {
    if (this.flushing !== null) {
      await this.flushing;
      if (this.dirty.size > 0 || this.markersChanged) this.schedule();
      return;
    }
    this.flushing = this.flushNow();
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
  }

  private async flushNow(): Promise<void> {
    await this.loaded;
    if (this.markersChanged) {
      this.markersChanged = false;
      this.watch(this.paths.live, (name) => this.markersMoved(name));
      this.findNewDispatches();
      // A marker that came or went moves the queue, and may be a live dispatch's record.
      for (const e of this.entries.values()) if (e.row.state !== "recorded") this.dirty.add(e.dir);
    }
    const dirs = [...this.dirty];
    const moved = new Set(this.streamDirty);
    this.dirty.clear();
    this.streamDirty.clear();
    if (dirs.length > 0) {
      const positions = queuePositionsOf(this.paths);
      for (const dir of dirs) {
        const before = this.entries.get(path.basename(dir))?.wire;
        await this.read(dir, positions, true);
        const after = this.entries.get(path.basename(dir))?.wire;
        if (JSON.stringify(before) !== JSON.stringify(after)) moved.add(dir);
      }
      if (this.sendChanges()) {
        this.lastChangedAt = this.clock.wallNow().toISOString();
        this.push({ type: "runs" });
      }
    }
    for (const dir of moved) {
      this.push({ type: "dispatch", run: this.paths.run, dispatchId: path.basename(dir) });
    }
  }

  /**
   * The slow poll, for what no file says: a live dispatch whose supervisor is gone (or that has none yet,
   * or whose folder is not watched) is read again — one look at /proc for each of the others; the live
   * markers are listed, and read only when the list changed; the queue is promoted when there is one.
   */
  async poll(): Promise<void> {
    if (this.loading) return;
    let queue = false;
    for (const e of this.entries.values()) {
      const pending = handOverPending(e.dir, e.view.record);
      if (e.row.state === "queued" || pending) queue = true;
      if (e.row.state === "recorded" && !pending) continue;
      if (e.row.state === "queued" || (this.watchers.has(e.dir) && stillSupervised(e.view))) continue;
      this.dirty.add(e.dir);
    }
    if (queue) await promoteQueue(this.paths);
    // Once a minute, the folders against the rows: those `catherd clean` removed leave the page, and one
    // no watch reported (a home without inotify) joins it.
    if (++this.polls % RECONCILE_EVERY_POLLS === 0) this.reconcile();
    const names = markerNames(this.paths.live);
    if (names !== this.markerList) {
      this.markerList = names;
      this.markersChanged = true;
    }
    if (this.dirty.size > 0 || this.markersChanged) this.schedule();
  }

  /**
   * Marks for reading the dispatches of the live markers there are now, and those whose marker the watch
   * named since: a dispatch admitted and recorded between two flushes left a name and no marker.
   */
  private findNewDispatches(): void {
    for (const marker of readLiveMarkers(this.paths)) {
      if (!isValidId(marker.name) || !isValidId(marker.dispatchId)) continue;
      const dir = dispatchDir(this.paths, marker.name, marker.dispatchId);
      if (!this.entries.has(marker.dispatchId) && fs.existsSync(dir)) this.dirty.add(dir);
    }
    for (const id of this.markerIds) {
      const dir = this.entries.has(id) ? null : dispatchDirById(this.paths, id);
      if (dir !== null) this.dirty.add(dir);
    }
    this.markerIds.clear();
  }

  /** Drops the rows whose folders are gone and marks for reading the folders no row has. */
  private reconcile(): void {
    let gone = false;
    for (const [id, e] of this.entries) {
      if (fs.existsSync(e.dir)) continue;
      this.entries.delete(id);
      for (const target of [e.dir, path.join(e.dir, FILES.inbox), path.join(e.dir, FILES.questions)])
        this.unwatch(target);
      gone = true;
    }
    if (gone && this.sendChanges()) this.push({ type: "runs" });
    let dirs: string[] = [];
    try {
      dirs = dispatchDirsOf(this.paths);
    } catch {
      return; // an unreadable run: its rows stay as they were
    }
    for (const dir of dirs) if (!this.entries.has(path.basename(dir))) this.dirty.add(dir);
  }

  /** Rows folded by chain (one row per chain, as status), live first then newest first. */
  rows(): RowWire[] {
    const all = [...this.entries.values()];
    const from = new Map<string, string>();
    for (const e of all) if (e.failoverFrom !== null) from.set(e.dispatchId, e.failoverFrom);
    const folded = foldedRows(
      all.map((e) => e.row),
      from,
    );
    const byId = new Map(all.map((e) => [e.dispatchId, e]));
    return folded
      .map((row) => {
        const entry = byId.get(row.dispatchId) as Entry;
        return { ...entry.wire, earlier: row.earlier.map((a) => ({ ...a })) };
      })
      .sort((a, b) => rank(a) - rank(b) || (a.dispatchId < b.dispatchId ? 1 : -1));
  }

  /** One bar per attempt, each naming its chain's first attempt (a follow-up's: its conversation's first turn's). */
  bars(): BarWire[] {
    const chainOf = (id: string): string => {
      let current = id;
      for (let i = 0; i < 1024; i++) {
        const entry = this.entries.get(current);
        const from = entry?.failoverFrom ?? entry?.bar.followUpOf;
        if (from == null || !this.entries.has(from)) return current;
        current = from;
      }
      return current;
    };
    return [...this.entries.values()]
      .map((e) => ({ ...e.bar, chain: chainOf(e.dispatchId) }))
      .sort((a, b) => a.admittedAtMs - b.admittedAtMs);
  }

  summary(): RunSummaryWire {
    const rows = this.rows();
    let tokens = 0;
    let cost: number | null = null;
    let last = this.lastChangedAt;
    for (const e of this.entries.values()) {
      tokens += totalTokens(e.wire.usage);
      const usd = e.wire.usage?.costUsd ?? null;
      if (usd !== null) cost = (cost ?? 0) + usd;
      for (const t of [e.wire.endedAt, e.wire.activityAt, e.wire.admittedAt])
        if (t !== null && (last === null || t > last)) last = t;
    }
    const runFile = readRunFile(this.paths);
    return {
      run: this.paths.run,
      live: rows.filter((r) => r.state !== "recorded" && r.state !== "queued").length,
      queued: rows.filter((r) => r.state === "queued").length,
      recorded: rows.filter((r) => r.state === "recorded").length,
      failed: rows.filter((r) => r.state === "recorded" && r.status !== "ok").length,
      tokens,
      costUsd: cost,
      budget: budgetOf(runFile as Record<string, unknown> | null),
      lastChangedAt: last,
      loading: this.loading,
    };
  }

  /** What was sent is what the page holds: remember it, to push only what differs later. */
  private remember(): { rows: RowWire[]; bars: BarWire[]; removed: string[]; removedBars: string[] } {
    const rows = this.rows();
    const bars = this.bars();
    const changedRows = rows.filter((r) => this.sentRows.get(r.dispatchId) !== JSON.stringify(r));
    const changedBars = bars.filter((b) => this.sentBars.get(b.dispatchId) !== JSON.stringify(b));
    const keepRows = new Set(rows.map((r) => r.dispatchId));
    const keepBars = new Set(bars.map((b) => b.dispatchId));
    const removed = [...this.sentRows.keys()].filter((id) => !keepRows.has(id));
    const removedBars = [...this.sentBars.keys()].filter((id) => !keepBars.has(id));
    for (const id of removed) this.sentRows.delete(id);
    for (const id of removedBars) this.sentBars.delete(id);
    for (const r of changedRows) this.sentRows.set(r.dispatchId, JSON.stringify(r));
    for (const b of changedBars) this.sentBars.set(b.dispatchId, JSON.stringify(b));
    return { rows: changedRows, bars: changedBars, removed, removedBars };
  }

  /** Pushes the rows and bars that differ from those sent; false when none does. */
  private sendChanges(): boolean {
    const { rows, bars, removed, removedBars } = this.remember();
    if (rows.length + bars.length + removed.length + removedBars.length === 0) return false;
    this.push({
      type: "rows",
      run: this.paths.run,
      rows,
      bars,
      removed,
      removedBars,
      now: this.clock.wallNow().getTime(),
    });
    return true;
  }

  /** The entry with every file of its folder read (its page shows them all). */
  async fullEntry(entry: Entry): Promise<Entry> {
    const { view, row } = await readDispatch(this.paths, entry.dir, queuePositionsOf(this.paths), true);
    const earlier = entry.wire.earlier;
    return {
      ...entry,
      view,
      row: { ...row, earlier: entry.row.earlier },
      wire: { ...rowWire(row, view), earlier },
    };
  }

  /** The folder of one of this run's dispatches, by id; null for an id it does not hold. */
  dirOf(dispatchId: string): string | null {
    return this.entries.get(dispatchId)?.dir ?? null;
  }

  close(): void {
    this.closed = true;
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    for (const target of [...this.watchers.keys()]) this.unwatch(target);
  }
}

/** The names in a run's live/ folder, as one string to compare. */
function markerNames(live: string): string {
  try {
    return fs.readdirSync(live).sort().join("\n");
  } catch {
    return "";
  }
}

/** Live first (queued after the running ones), recorded last. */
function rank(r: RowWire): number {
  return r.state === "recorded" ? 2 : r.state === "queued" ? 1 : 0;
}
