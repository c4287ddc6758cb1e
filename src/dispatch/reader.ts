import { handOverPending, lastAttemptDir } from "../folder/chain.js";
import { runOf } from "../folder/layout.js";
import { type Clock, systemClock } from "../infra/clock.js";
import type { RunPaths } from "../infra/paths.js";
import { promoteRun } from "./queue/promote.js";
import { type EngineSights, engineSights } from "./read/engine-sight.js";
import { type DispatchView, inspectDispatch } from "./read/inspect.js";
import { recordDead } from "./settle/settle.js";
import { adoptOrphan } from "./start/adopt.js";

// The reader gate (specs/cli.md, "Readers' duties"): the one way a command looks at a dispatch. Reading is
// never only reading here: there is no daemon, so whoever reads a run keeps it moving — promotes its queue
// (and hands a chain over when that is due), has an orphan adopted by a new supervisor, records a dispatch
// whose supervisor died, and follows a chain to its last attempt. Every verb, the MCP server and its
// notifier read through here, so that what each shows is what the others show. The run's admission lock
// is never held here: what needs it (a promotion) takes it and lets it go before any duty is done. For a
// dispatch an engine placed, the gate asks the engine about its job before it reads the folder, where the
// answer can change the verdict (read/engine-sight.ts), and for many folders in one call.

export interface ReadOptions {
  clock?: Clock;
  /**
   * `last`: the chain's last attempt, following next.json — and, when a recorded attempt's hand-over is
   * due and nobody did it, doing it first (promotion's work). `as-is`: this folder. Default `as-is`.
   */
  chain?: "last" | "as-is";
  /**
   * Promote the run's queue before looking (default true). False for `cancel`, which must not start what
   * it cancels (nor hand a chain over that it stops), and for a caller that promoted the run already.
   */
  promote?: boolean;
}

/** How many hand-overs one read follows before it reports what it sees: far more than happen at once. */
const HAND_OVERS_FOLLOWED = 8;

/** A dispatch as a reader sees it once the reader's duties are done. */
export async function readDispatch(dir: string, options: ReadOptions = {}): Promise<DispatchView> {
  const clock = options.clock ?? systemClock;
  const promote = options.promote ?? true;
  const run = runOf(dir);
  if (promote && run !== null) await promoteQuietly(run, clock, []);
  return look(dir, { run, clock, chain: options.chain === "last", handOver: promote, sights: new Map() });
}

/** Several dispatches, each as `readDispatch` sees it; the run of each is promoted once, not once a folder. */
export async function readDispatches(
  dirs: readonly string[],
  options: ReadOptions = {},
): Promise<DispatchView[]> {
  const clock = options.clock ?? systemClock;
  if (options.promote ?? true) {
    const runs = new Map<string, RunPaths>();
    for (const dir of dirs) {
      const run = runOf(dir);
      if (run !== null) runs.set(run.dir, run);
    }
    for (const run of runs.values()) await promoteQuietly(run, clock, []);
  }
  const chain = options.chain === "last";
  const sights = await engineSights(chain ? dirs.map(lastAttemptDir) : dirs, clock);
  const views: DispatchView[] = [];
  const handOver = options.promote ?? true;
  for (const dir of dirs) views.push(await look(dir, { run: runOf(dir), clock, chain, handOver, sights }));
  return views;
}

/**
 * The folder inspected with what its engine says of its job, asked now unless `sights` has it: the one
 * way the gate looks at a folder.
 */
export async function lookAt(
  dir: string,
  clock: Clock,
  sights: EngineSights = new Map(),
): Promise<DispatchView> {
  const job = sights.get(dir) ?? (await engineSights([dir], clock)).get(dir) ?? null;
  return inspectDispatch(dir, { clock, job });
}

/** How `look` goes about one folder. */
interface Look {
  run: RunPaths | null;
  clock: Clock;
  /** Follow the chain to its last attempt. */
  chain: boolean;
  /** Hand a recorded attempt over where that is due (promotion's work, under the run's lock). */
  handOver: boolean;
  /** What engines said of their jobs, asked before; the others are asked as they come. */
  sights: EngineSights;
}

/** One folder with its duties done; with `chain`, followed to its last attempt, handing over where due. */
async function look(dir: string, { run, clock, chain, handOver, sights }: Look): Promise<DispatchView> {
  let current = chain ? lastAttemptDir(dir) : dir;
  for (let followed = 0; ; followed++) {
    const view = await doDuties(await lookAt(current, clock, sights), clock);
    const due = view.record !== null && handOverPending(current, view.record);
    if (!chain || !due || !handOver || run === null || followed >= HAND_OVERS_FOLLOWED) return view;
    await promoteQuietly(run, clock, [current]);
    const next = lastAttemptDir(current);
    // Not handed over (the lock was busy past its wait): report the recorded attempt as it is.
    if (next === current) return inspectDispatch(current, { clock });
    current = next;
  }
}

/**
 * Promotes a run as a reader does: best effort — a reader reports what it reads even when the lock is busy
 * past its wait or a launch fails; the next one promotes again — then does the duties the promotion found.
 */
export async function promoteQuietly(run: RunPaths, clock: Clock, due: readonly string[]): Promise<void> {
  const promoted = await promoteRun(run, { clock, due }).catch(() => null);
  await doDutiesIn(promoted?.withDuties ?? [], clock);
}

/** The duties of these folders, found needing them by someone who could not do them then (under a lock). */
export async function doDutiesIn(dirs: readonly string[], clock: Clock): Promise<void> {
  const sights = await engineSights(dirs, clock);
  for (const dir of dirs) await doDuties(await lookAt(dir, clock, sights), clock);
}

/**
 * The duties of a reader that found a dispatch so (inspect.ts, `duty`): an orphan is adopted (and, if its
 * agent ended meanwhile, found lost), a dispatch whose supervisor is gone is recorded. Returns the view
 * after; a dispatch with no duty is returned as it is.
 */
export async function doDuties(view: DispatchView, clock: Clock): Promise<DispatchView> {
  const adopted = view.duty === "adopt" ? await adoptOrphan(view, clock) : view;
  return recordDead(adopted, clock);
}
