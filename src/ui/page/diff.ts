// changes.patch read for showing: each line classified (file header, hunk, added, removed, context), a
// binary patch's encoded data folded into one line. Pure: no DOM. The text stays text.

export type DiffKind = "file" | "meta" | "hunk" | "add" | "del" | "ctx" | "binary";

export interface DiffLine {
  kind: DiffKind;
  text: string;
}

/** At most this many lines are shown; the rest are counted. */
export const MAX_DIFF_LINES = 20_000;

export function parsePatch(patch: string): { lines: DiffLine[]; omitted: number; files: number } {
  const lines: DiffLine[] = [];
  let omitted = 0;
  let files = 0;
  let binaryRun = 0;
  const push = (line: DiffLine) => {
    if (lines.length < MAX_DIFF_LINES) lines.push(line);
    else omitted += 1;
  };
  const endBinary = () => {
    if (binaryRun > 0) push({ kind: "binary", text: `(binary data, ${binaryRun} lines)` });
    binaryRun = 0;
  };
  let inBinary = false;
  for (const text of patch.split("\n")) {
    if (text.startsWith("diff --git ")) {
      endBinary();
      inBinary = false;
      files += 1;
      push({ kind: "file", text });
    } else if (inBinary) {
      if (text === "") endBinary();
      else binaryRun += 1;
    } else if (text === "GIT binary patch" || text.startsWith("Binary files ")) {
      inBinary = text === "GIT binary patch";
      push({ kind: "meta", text });
    } else if (text.startsWith("@@")) push({ kind: "hunk", text });
    else if (text.startsWith("+++ ") || text.startsWith("--- ")) push({ kind: "meta", text });
    else if (text.startsWith("+")) push({ kind: "add", text });
    else if (text.startsWith("-")) push({ kind: "del", text });
    else if (text.startsWith(" ") || text === "") push({ kind: "ctx", text });
    else push({ kind: "meta", text });
  }
  endBinary();
  if (lines.at(-1)?.text === "" && lines.at(-1)?.kind === "ctx") lines.pop();
  return { lines, omitted, files };
}
