import type { RecordFile, SpecFile } from "../domain/schemas.js";
import { bytes } from "./render.js";

/**
 * What a finished dispatch left behind, for people: its patch and how to apply it, its worktree and
 * how to bring its commits in, its private temp folder. No lines for a dispatch that left none of these.
 */
export function leftBehindLines(record: RecordFile, spec: SpecFile | null): string[] {
  const lines: string[] = [];
  const repo = spec?.worktree?.repo ?? null;
  if (record.patch !== null && record.patch !== undefined) {
    const files = record.changedFiles === null ? "" : `, ${record.changedFiles.length} files changed`;
    if (record.patch.bytes === 0) {
      lines.push(`changes: none in its --owns (${record.patch.path} is empty${files})`);
    } else {
      lines.push(`changes: ${record.patch.path} (${bytes(record.patch.bytes)}${files})`);
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
    lines.push(`worktree: ${worktree.path} on ${worktree.branch}${made} (${bytes(worktree.bytes)})`);
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
