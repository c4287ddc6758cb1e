/**
 * Whether two owned paths overlap. Both are absolute; a trailing `/` makes a folder that covers
 * everything under it (and the folder named without the slash); otherwise the path names one file.
 */
export function ownsOverlap(a: string, b: string): boolean {
  return a === b || covers(a, b) || covers(b, a);
}

function covers(folder: string, other: string): boolean {
  return folder.endsWith("/") && (other.startsWith(folder) || `${other}/` === folder);
}

/** The first owned path of `mine` that overlaps one of `theirs`, or null. */
export function firstOverlap(mine: readonly string[], theirs: readonly string[]): string | null {
  for (const a of mine) if (theirs.some((b) => ownsOverlap(a, b))) return a;
  return null;
}
