// What `catherd clean` does with one dispatch: a pure rule, so that "never a live dispatch, never a
// worktree with work in it unless forced" is a table test.

/** `clean`'s age when none is given, as the flag reads and in milliseconds. */
export const DEFAULT_CLEAN_AGE = "7d";
export const DEFAULT_CLEAN_AGE_MS = 7 * 86_400_000;
/** `status` mentions a run whose old records hold more than this for `clean` to free. */
export const CLEANABLE_NOTE_BYTES = 1024 ** 3;

/** What clean knows about a dispatch's worktree; null fields are unknown, and unknown is never clean. */
export interface WorktreeFacts {
  /** The worktree's folder lies under the run's `worktrees/` folder (a hand-edited path never does). */
  insideRun: boolean;
  exists: boolean;
  dirty: boolean | null;
  /** How many commits on its HEAD or branch no other branch contains. */
  unmerged: number | null;
  branch: string;
}

export interface CleanFacts {
  /** Recorded: it has record.json. Anything else (live, queued, lost but not yet recorded) is kept. */
  recorded: boolean;
  /** When it ended (record), or when it was admitted when it has not ended; epoch ms, null when unknown. */
  at: number | null;
  worktree: WorktreeFacts | null;
  /**
   * The deciding files that exist but cannot be read (`record.json`, `admit.json`), each with its error
   * code: such a folder cannot be judged live or old, and is kept and listed. Absent: none.
   */
  unreadable?: readonly { file: string; code: string }[];
}

export interface CleanRule {
  now: number;
  olderThanMs: number;
  force: boolean;
}

export type CleanVerdict =
  /** Newer than the age: not a candidate, not listed. */
  | { action: "young" }
  | { action: "keep"; why: string }
  /** Remove the folder, and the worktree with it when `worktree` (with `force` when it has work in it). */
  | { action: "remove"; worktree: "none" | "remove" | "force" };

/** The verdict for one dispatch. */
export function judgeForClean(facts: CleanFacts, rule: CleanRule): CleanVerdict {
  const unreadable = facts.unreadable ?? [];
  if (unreadable.length > 0) {
    const files = unreadable.map((u) => `${u.file} (${u.code})`).join(", ");
    return {
      action: "keep",
      why: `cannot read ${files}: clean cannot tell whether it is live or how old; repair or remove it by hand`,
    };
  }
  if (facts.at === null || rule.now - facts.at < rule.olderThanMs) {
    // An unknown age is never old enough: it might be a dispatch being admitted right now.
    return { action: "young" };
  }
  if (!facts.recorded) return { action: "keep", why: "not recorded (live, queued, or not yet settled)" };
  const worktree = facts.worktree;
  if (worktree === null) return { action: "remove", worktree: "none" };
  if (!worktree.insideRun)
    return { action: "keep", why: "its worktree lies outside the run's worktrees folder" };
  if (!worktree.exists) return { action: "remove", worktree: "remove" };
  const work = workIn(worktree);
  if (work === null) return { action: "remove", worktree: "remove" };
  return rule.force
    ? { action: "remove", worktree: "force" }
    : { action: "keep", why: `${work} (--force removes it, work and all)` };
}

/** Why a worktree holds work that its removal could lose, or null when it holds none. */
function workIn(worktree: WorktreeFacts): string | null {
  const why: string[] = [];
  if (worktree.dirty === null || worktree.unmerged === null) why.push("its worktree cannot be inspected");
  if (worktree.dirty === true) why.push("uncommitted changes in its worktree");
  if (worktree.unmerged !== null && worktree.unmerged > 0) {
    const n = worktree.unmerged;
    why.push(`${n} commit${n === 1 ? "" : "s"} on ${worktree.branch} that no other branch contains`);
  }
  return why.length === 0 ? null : why.join("; ");
}
