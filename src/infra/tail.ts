import * as fs from "node:fs";

/** The last `maxLines` complete lines within the last `maxBytes` of a file; never reads the whole file. */
export function tailLines(file: string, maxLines: number, maxBytes = 256 * 1024): string[] {
  let fd: number;
  try {
    // Without blocking: a FIFO left in a folder must not hang `show`.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return [];
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return [];
    const size = stat.size;
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    fs.readSync(fd, buffer, 0, buffer.length, start);
    let text = buffer.toString("utf8");
    if (start > 0) text = text.slice(text.indexOf("\n") + 1); // drop the partial first line
    const lines = text.split("\n");
    if (lines.at(-1) === "") lines.pop();
    return lines.slice(-maxLines).map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  } finally {
    fs.closeSync(fd);
  }
}
