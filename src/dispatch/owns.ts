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
