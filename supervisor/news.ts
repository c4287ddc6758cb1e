import * as fs from "node:fs";
import * as path from "node:path";
import { FILES } from "../src/folder/layout.js";
import { isLockReportName } from "../src/folder/lock-reports.js";
import { makeDir } from "../src/infra/atomic.js";
import type { Clock } from "../src/infra/clock.js";
import { type FolderWatch, watchFolder } from "../src/infra/folder-watch.js";
import type { Sensor, Sight } from "./sensor.js";

/**
 * The files whose change is news: the agent's output, a cancel request, a lock's report (slot-reports.ts);
 * for a steerable dispatch the inbox and the questions (watched folders of their own).
 */
const WATCHED: readonly string[] = [FILES.events, FILES.stderr, FILES.cancel];
const isWatched = (name: string) => WATCHED.includes(name) || isLockReportName(name);

export interface NewsInput {
  dir: string;
  clock: Clock;
  pollMs: number;
  /** Aborted when the agent exits or the supervisor is asked to stop: either cuts any sleep. */
  wake: AbortSignal;
  /** A steerable dispatch: its inbox/ and questions/ are watched too. */
  steerable: boolean;
  /** Told when a lock's report may have changed (slot-reports.ts). */
  onLockReport: () => void;
  /** What the poll's read of the agent's streams gave (agent-sensor.ts). */
  output: { readonly bytes: number };
}

/**
 * What cuts the loop's sleep short, and the sensor of the output's flow. The folder watches (inotify) tell
 * of a change to a watched file; the agent's exit and a signal to the supervisor end any sleep, and so
 * does a `cancel` file. Output flows when the poll's read gave bytes or a watched file changed since the
 * poll began (always so where the folder cannot be watched): the next look is then pollMs away, and a
 * change does not cut that sleep; else this sensor needs no look of its own, and a change cuts the sleep.
 * Looks last in a poll, so that the changes of the whole poll count.
 */
export class News implements Sensor {
  private readonly folder: FolderWatch | null;
  private readonly others: FolderWatch[] = [];
  /** A watched file may have changed since the poll began. */
  private changed: boolean;
  private flowing = false;
  /** The current sleep, to cut short. */
  private sleeping: AbortController | null = null;
  private readonly onWake = () => this.sleeping?.abort();

  constructor(private readonly input: NewsInput) {
    const { dir, onLockReport } = input;
    // One listener for the whole dispatch: a new one per poll would grow for hours.
    input.wake.addEventListener("abort", this.onWake);
    this.folder = watchFolder(dir, isWatched, (name) => {
      if (name === "" || isLockReportName(name)) onLockReport();
      this.news(name === FILES.cancel);
    });
    if (input.steerable) {
      for (const sub of [FILES.inbox, FILES.questions]) {
        makeDir(path.join(dir, sub));
        this.watch(path.join(dir, sub), () => true);
      }
    }
    // A sandboxed agent's locks report in locks/ (src/folder/lock-reports.ts): watched as the folder is.
    const locks = path.join(dir, FILES.lockReports);
    if (fs.existsSync(locks)) this.watch(locks, isLockReportName, onLockReport);
    this.changed = !this.watched;
  }

  /** Whether the folder watch tells of changes: false without inotify, or once the watch broke. */
  get watched(): boolean {
    return this.folder !== null && !this.folder.broken;
  }

  look(now: number): Sight {
    this.flowing = this.changed || this.input.output.bytes > 0;
    return { nextLookAt: this.flowing ? now + this.input.pollMs : Number.POSITIVE_INFINITY };
  }

  /** Sleeps `ms`, or until news ends the sleep. */
  async sleep(ms: number): Promise<void> {
    const sleeping = new AbortController();
    this.sleeping = sleeping;
    if (this.input.wake.aborted) sleeping.abort();
    await this.input.clock.sleep(ms, sleeping.signal);
    this.sleeping = null;
    this.changed = !this.watched;
  }

  close(): void {
    this.input.wake.removeEventListener("abort", this.onWake);
    this.folder?.close();
    for (const watch of this.others) watch.close();
  }

  private news(always: boolean): void {
    this.changed = true;
    if (always || !this.flowing) this.sleeping?.abort();
  }

  private watch(folder: string, names: (name: string) => boolean, also?: () => void): void {
    const watch = watchFolder(folder, names, () => {
      also?.();
      this.news(false);
    });
    if (watch !== null) this.others.push(watch);
  }
}
