#!/usr/bin/env node
// @ts-check
// A chatty Codex-shaped agent for the bench. Every tick (BENCH_CHATTY_HZ per second, default 100) it
// appends, in one write, the next line of the recorded Codex streams and a line stamped with the wall
// time of that write: {"type":"item.completed","item":{"type":"agent_message","text":"t=<ms>"}}.
// The supervisor turns the stamp into activity.json's lastEvent ("says t=<ms>"), so a reader can tell how
// far behind the writer the supervisor's last read was. Final and error lines are left out of the cycle
// (they would end the dispatch or count as provider retries); tool calls open and close in their order.
// It ignores its stdin, and runs until it is stopped; `--version` alone, as catherd's readiness check asks
// a Codex, it answers as the Codex version the backend needs at least.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

if (process.argv.length === 3 && process.argv[2] === "--version") {
  process.stdout.write("codex-cli 0.171.0\n");
  process.exit(0);
}

const here = path.dirname(fileURLToPath(import.meta.url));
const recorded = path.resolve(here, "../../test/fixtures/recorded/codex");
/** @type {string[]} */
const lines = [];
for (const name of fs.readdirSync(recorded).sort()) {
  if (!name.endsWith(".jsonl")) continue;
  for (const line of fs.readFileSync(path.join(recorded, name), "utf8").split("\n")) {
    if (line.trim() === "") continue;
    let type = "";
    try {
      type = JSON.parse(line).type;
    } catch {
      continue;
    }
    if (type === "turn.completed" || type === "turn.failed" || type === "error") continue;
    lines.push(line);
  }
}
const hz = Number(process.env.BENCH_CHATTY_HZ ?? 100);
let next = 0;
setInterval(
  () => {
    const line = lines[next++ % lines.length];
    const stamp = JSON.stringify({
      type: "item.completed",
      item: { id: "stamp", type: "agent_message", text: `t=${Date.now()}` },
    });
    fs.writeSync(1, `${line}\n${stamp}\n`);
  },
  Math.max(1, Math.round(1000 / hz)),
);
