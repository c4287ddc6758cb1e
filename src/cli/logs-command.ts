import * as fs from "node:fs";
import { inspectDispatch } from "../dispatch/inspect.js";
import { settleIfDead } from "../dispatch/settle.js";
import { backendOf } from "../folder/backend.js";
import { humanLine } from "../folder/human-line.js";
import { FILES, fileIn } from "../folder/layout.js";
import { systemClock } from "../infra/clock.js";
import { LineReader } from "../infra/line-reader.js";
import { waitUntil } from "../infra/wait-until.js";
import type { Command } from "./kit.js";
import { dispatchDirOf, refOf } from "./resolve.js";

const FOLLOW_POLL_MS = 200;
const CHUNK_BYTES = 4 * 1024 * 1024;

export const logsCommand: Command<{ lines: string[] } | null> = {
  name: "logs",
  usage: `usage: catherd logs <name|id|dir> [--follow] [--raw] [--run <r>] [--json]

The event stream as human lines (the backend's reading of each event; an exec command's own lines as
they are), or --raw as the CLI wrote it.
--follow keeps printing until the dispatch is recorded. With --json, {lines: [...]}.`,
  options: { run: { type: "string" }, follow: { type: "boolean" }, raw: { type: "boolean" } },
  async handler(input) {
    const ref = refOf(input, "logs");
    const dir = dispatchDirOf(input, ref);
    const backend = backendOf(inspectDispatch(dir));
    // exec's output is whatever the command prints: its lines as they are (specs/cli.md, logs).
    const render = (line: string): string | null =>
      input.values.raw === true || backend.plainText ? line : humanLine(backend, line);
    const collected: string[] = [];
    const emit = (line: string) => {
      const shown = render(line);
      if (shown === null) return;
      if (input.json) collected.push(shown);
      else process.stdout.write(`${shown}\n`);
    };
    const reader = new LineReader(fileIn(dir, FILES.events));
    try {
      const drain = () => {
        for (let r = reader.read(CHUNK_BYTES); r.bytes > 0; r = reader.read(CHUNK_BYTES))
          r.lines.forEach(emit);
      };
      drain();
      if (input.values.follow === true) {
        await waitUntil(
          async () => {
            if (fs.existsSync(fileIn(dir, FILES.record))) return true;
            await settleIfDead(inspectDispatch(dir));
            drain();
            return undefined;
          },
          { clock: systemClock, deadline: Number.POSITIVE_INFINITY, pollMs: FOLLOW_POLL_MS },
        );
        drain();
      }
      reader.flush().lines.forEach(emit);
    } finally {
      reader.close();
    }
    return { data: input.json ? { lines: collected } : null, text: "" };
  },
};
