import type { AdmitFile, RecordFile, SpecFile } from "../domain/schemas.js";
import { changedOutsideOwns } from "../folder/outside-owns.js";
import { bytes } from "./render.js";

/**
 * What a finished dispatch left behind, for people: its patch and how to apply it, its worktree and
 * how to bring its commits in, its private temp folder. No lines for a dispatch that left none of these.
 */
export function leftBehindLines(
  record: RecordFile,
  spec: SpecFile | null,
  admit: Pick<AdmitFile, "owns" | "git"> | null,
): string[] {
  const lines: string[] = [];
  const repo = spec?.worktree?.repo ?? null;
  if (record.patch !== null && record.patch !== undefined) {
    lines.push(...changeLines(record.patch, record.changedFiles, admit));
    if (record.patch.bytes > 0) {
      lines.push(
        repo === null
          ? `  to apply them to another checkout, at its top: git apply ${record.patch.path}`
          : `  to apply them (committed or not) to your checkout: git -C ${repo} apply ${record.patch.path}`,
      );
    }
  }
  const worktree = record.worktree ?? null;
  if (worktree !== null) {
    const commits = record.commits ?? null;
    const made = commits === null ? "" : `, ${commits.count} commit${commits.count === 1 ? "" : "s"}`;
    lines.push(`worktree: ${worktree.path} on ${worktree.branch}${made} (${bytes(worktree.bytes)} on disk)`);
    if (commits !== null && commits.count > 0) {
      lines.push(
        `  to bring its commits in: git${repo === null ? "" : ` -C ${repo}`} merge ${worktree.branch}`,
      );
    }
    lines.push("  remove it once done: catherd clean (keeps it while it holds uncommitted or unmerged work)");
  }
  const tmp = record.tmp ?? null;
  if (tmp !== null && tmp.bytes > 0) {
    lines.push(
      `temp: ${bytes(tmp.bytes)} ${tmp.kept ? `kept in ${tmp.path}` : "held, removed after the stop"}`,
    );
  }
  return lines;
}

/**
 * What the patch holds, against what changed: `changedFiles` counts the whole work tree, the patch only
 * what lies under `--owns` when the dispatch gave one (specs/dispatch.md §6), and the words say which.
 */
function changeLines(
  patch: { path: string; bytes: number },
  changedFiles: readonly string[] | null,
  admit: Pick<AdmitFile, "owns" | "git"> | null,
): string[] {
  const owns = admit?.owns ?? [];
  const changed = changedFiles?.length ?? null;
  const files = (n: number) => `${n} file${n === 1 ? "" : "s"}`;
  if (owns.length === 0) {
    if (patch.bytes === 0) return [`changes: none (${patch.path} is empty)`];
    return [
      `changes: ${patch.path} (${bytes(patch.bytes)}${changed === null ? "" : `, ${files(changed)} changed`})`,
    ];
  }
  const scope = `its --owns ${owns.join(",")}`;
  const outside = changedOutsideOwns(changedFiles, admit?.git?.prefix, owns) ?? [];
  const named = outside.slice(0, SHOWN_OUTSIDE).join(", ");
  const more = outside.length > SHOWN_OUTSIDE ? ` and ${outside.length - SHOWN_OUTSIDE} more` : "";
  const left =
    outside.length === 0
      ? ", none outside it"
      : `, ${outside.length} outside it and not in the patch: ${named}${more}`;
  const inAll = changed === null ? "" : `; ${files(changed)} changed in the work tree in all${left}`;
  if (patch.bytes === 0) return [`changes: none under ${scope} (${patch.path} is empty)${inAll}`];
  return [`changes under ${scope}: ${patch.path} (${bytes(patch.bytes)})${inAll}`];
}

/** How many of the files changed outside --owns `result` names; the rest are counted. */
const SHOWN_OUTSIDE = 5;
