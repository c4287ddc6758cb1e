import { ownsFromTop } from "./changes.js";

// The changed files a dispatch's patch leaves out: those outside its --owns (specs/dispatch.md §6: the
// patch is restricted to --owns, `changedFiles` is the whole work tree), so that `result` can name them.

/**
 * The paths of `changedFiles` (from the repository's top) that no --owns covers: a trailing `/` covers a
 * folder, any other path that file. Empty without --owns (the patch holds everything); null when the
 * changed files are unknown.
 */
export function changedOutsideOwns(
  changedFiles: readonly string[] | null,
  prefix: string | undefined,
  owns: readonly string[],
): string[] | null {
  if (changedFiles === null) return null;
  const fromTop = ownsFromTop(prefix, owns);
  if (fromTop.length === 0) return [];
  const covered = (file: string) =>
    fromTop.some((own) => (own.endsWith("/") ? file.startsWith(own) : file === own));
  return changedFiles.filter((file) => !covered(file));
}
