import { spawnSync } from "node:child_process";
import * as fs from "node:fs";

// A steerable agent's input (specs/steering.md, "The channel"): a FIFO in the dispatch folder. The agent
// gets it opened for reading *and* writing, so it never sees the end of its input while it runs — not when
// the supervisor dies, not between two supervisors — and an adopter opens it again to go on writing.

/** Creates the FIFO (mode 0600) unless it is there. Node has no mkfifo: coreutils' does it. */
export function makeChannel(file: string): void {
  if (fs.existsSync(file)) return;
  const made = spawnSync("mkfifo", ["-m", "600", file], { encoding: "utf8" });
  if (made.status !== 0) {
    throw new Error(
      `cannot make the channel ${file}: ${made.stderr.trim() || made.error?.message || "mkfifo failed"}`,
    );
  }
}

/** The agent's end: read and write, so that no writer's exit is ever its end of input. */
export function openAgentEnd(file: string): number {
  return fs.openSync(file, fs.constants.O_RDWR);
}

export type WriteResult = "written" | "pending" | "closed";

/**
 * The supervisor's end. Never blocks: a CLI that stops reading leaves the rest of a line pending, written
 * on the next `flush`, and the loop goes on judging it. `closed`: nobody reads any more (the agent is gone).
 */
export class ChannelWriter {
  private fd: number | null = null;
  private pending: Buffer | null = null;

  constructor(private readonly file: string) {}

  /** Writes a line (a newline is added). A line is never interleaved with another: one goes at a time. */
  write(line: string): WriteResult {
    const flushed = this.flush();
    const data = Buffer.from(`${line}\n`, "utf8");
    if (flushed !== "written") {
      this.pending = this.pending === null ? data : Buffer.concat([this.pending, data]);
      return flushed;
    }
    this.pending = data;
    return this.flush();
  }

  /** Writes what is pending; `written` when nothing is left. */
  flush(): WriteResult {
    while (this.pending !== null) {
      const fd = this.open();
      if (fd === null) return "closed";
      let wrote: number;
      try {
        wrote = fs.writeSync(fd, this.pending);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "EAGAIN") return "pending";
        if (code === "EPIPE") return "closed";
        throw error;
      }
      this.pending = wrote >= this.pending.length ? null : this.pending.subarray(wrote);
    }
    return "written";
  }

  get hasPending(): boolean {
    return this.pending !== null;
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  private open(): number | null {
    if (this.fd !== null) return this.fd;
    try {
      this.fd = fs.openSync(this.file, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
      return this.fd;
    } catch (error) {
      // ENXIO: no reader holds the FIFO (the agent is gone); ENOENT: no channel.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENXIO" || code === "ENOENT") return null;
      throw error;
    }
  }
}
