import * as fs from "node:fs";
import * as path from "node:path";
import { isValidId } from "../../domain/ids.js";
import type { Clock } from "../../infra/clock.js";
import { type FolderWatch, watchFolder } from "../../infra/folder-watch.js";
import { runPaths } from "../../infra/paths.js";
import type { PushWire, RunSummaryWire } from "../wire.js";
import { AccountsWatch } from "./accounts-wire.js";
import { RunModel } from "./run-model.js";

/** The slow poll (see RunModel): what no file says shows within this long. */
export const POLL_MS = 5_000;

/**
 * Every run of a home as the dashboard keeps it: a RunModel per run, found by watching `<home>/runs`
 * (and the slow poll), each loaded when found. Pushes go to every subscriber.
 */
export class HomeModel {
  private readonly runs = new Map<string, RunModel>();
  private readonly subscribers = new Set<(push: PushWire) => void>();
  private watcher: FolderWatch | null = null;
  private homeWatcher: FolderWatch | null = null;
  private readonly timer: NodeJS.Timeout;
  private polling = false;
  /** The home's accounts: judged again on each poll and after each change of a run's rows. */
  private readonly accounts: AccountsWatch;

  constructor(
    readonly home: string,
    private readonly clock: Clock,
  ) {
    this.accounts = new AccountsWatch(
      home,
      () => clock.wallNow().getTime(),
      (push) => this.emit(push),
    );
    this.accounts.check();
    this.scan();
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  private get runsDir(): string {
    return path.join(this.home, "runs");
  }

  /** Finds runs not yet known (and watches the runs folder once it exists). */
  private scan(): void {
    if (this.watcher === null || this.watcher.broken) {
      this.watcher = watchFolder(
        this.runsDir,
        () => true,
        () => this.scan(),
      );
      // No runs yet: the home is watched for its runs folder (and the poll looks again).
      if (this.watcher === null) this.watchHome();
    }
    let names: string[];
    try {
      names = fs.readdirSync(this.runsDir);
    } catch {
      return;
    }
    let added = false;
    for (const name of names) {
      if (this.runs.has(name) || !isValidId(name)) continue;
      if (!fs.lstatSync(path.join(this.runsDir, name), { throwIfNoEntry: false })?.isDirectory()) continue;
      this.runs.set(name, new RunModel(runPaths(this.home, name), (push) => this.emit(push), this.clock));
      added = true;
    }
    if (added) this.emit({ type: "runs" });
  }

  /** Watches the home itself until its runs folder appears. */
  private watchHome(): void {
    if (this.homeWatcher !== null) return;
    // Null when there is no home yet either: the poll covers it.
    this.homeWatcher = watchFolder(this.home, ["runs"], () => {
      this.homeWatcher?.close();
      this.homeWatcher = null;
      this.scan();
    });
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      this.scan();
      for (const run of this.runs.values()) await run.poll();
      // Only an open page shows the accounts; one opened later fetches them afresh.
      if (this.subscribers.size > 0) this.accounts.check();
    } finally {
      this.polling = false;
    }
  }

  private emit(push: PushWire): void {
    // A run's rows changed: a dispatch may have been parked, started, or have reported a window.
    if ((push.type === "rows" || push.type === "runs") && this.subscribers.size > 0) this.accounts.soon();
    for (const subscriber of this.subscribers) subscriber(push);
  }

  subscribe(subscriber: (push: PushWire) => void): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  /** A run by name, found now if it appeared since the last look; null when the home has none such. */
  run(name: string): RunModel | null {
    if (!this.runs.has(name)) this.scan();
    return this.runs.get(name) ?? null;
  }

  summaries(): RunSummaryWire[] {
    return [...this.runs.values()]
      .map((r) => r.summary())
      .sort((a, b) => ((a.lastChangedAt ?? "") < (b.lastChangedAt ?? "") ? 1 : -1));
  }

  close(): void {
    clearInterval(this.timer);
    this.accounts.close();
    this.watcher?.close();
    this.homeWatcher?.close();
    for (const run of this.runs.values()) run.close();
    this.subscribers.clear();
  }
}
