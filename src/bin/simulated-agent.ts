#!/usr/bin/env node
// The embedded simulated agent of `catherd demo`: it speaks `codex exec --json` (the format of the recorded
// streams in test/fixtures/recorded/codex/). It answers `--version` as codex does; else it reads its brief
// on stdin to EOF, runs a few "tool calls", goes quiet until the supervisor's stall notice, recovers, and
// answers. Nothing to install, no network.
import * as fs from "node:fs";
import * as path from "node:path";
import { DEMO_DISPATCHES_ENV } from "../demo/dispatches-env.js";
import { SIMULATED_AGENT_VERSION } from "../demo/wire-format.js";

if (process.argv.includes("--version")) {
  process.stdout.write(`${SIMULATED_AGENT_VERSION}\n`);
  process.exit(0);
}
const brief = fs.readFileSync(0, "utf8").trim();
const say = (event: unknown) => fs.writeSync(1, `${JSON.stringify(event)}\n`);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const command = (id: string, cmd: string, output: string, exitCode: number) => ({
  id,
  type: "command_execution",
  command: `/bin/bash -lc '${cmd}'`,
  aggregated_output: output,
  exit_code: exitCode,
  status: "completed",
});

say({ type: "thread.started", thread_id: `demo-${process.pid}` });
say({ type: "turn.started" });
say({
  type: "item.started",
  item: { ...command("item_1", "npm test", "", 0), status: "in_progress", exit_code: null },
});
await pause(1200);
say({ type: "item.completed", item: command("item_1", "npm test", "1 failing: adds two numbers\n", 1) });
say({ type: "item.completed", item: { id: "item_2", type: "reasoning", text: "The sum is off by one." } });
const change = {
  id: "item_3",
  type: "file_change",
  changes: [{ path: "src/sum.ts", kind: "update" }],
  status: "completed",
};
say({ type: "item.started", item: { ...change, status: "in_progress" } });
await pause(400);
say({ type: "item.completed", item: change });
say({
  type: "item.started",
  item: { ...command("item_4", "npm test", "", 0), status: "in_progress", exit_code: null },
});
await pause(900);
say({ type: "item.completed", item: command("item_4", "npm test", "all 12 passing\n", 0) });
// Quiet with no tool call open until the supervisor writes its stall notice (at idle/2), however slow
// the machine: the supervisor judges the quiet, this agent only waits to be noticed.
const dispatches = process.env[DEMO_DISPATCHES_ENV];
const dispatchId = process.env.CATHERD_DISPATCH;
if (dispatches !== undefined && dispatchId !== undefined) {
  const stallNotice = path.join(dispatches, dispatchId, "stall.json");
  while (!fs.existsSync(stallNotice)) await pause(50);
  await pause(500); // recovering: the answer follows the notice visibly
} else {
  await pause(2600); // run by hand: long enough for a 2 s stall notice, short of a 4 s idle limit
}
say({
  type: "item.completed",
  item: {
    id: "item_5",
    type: "agent_message",
    text: `Done: ${brief.slice(0, 60)}\nFixed an off-by-one in src/sum.ts; npm test passes (12 tests).`,
  },
});
say({
  type: "turn.completed",
  usage: { input_tokens: 18_240, cached_input_tokens: 12_032, output_tokens: 611 },
});
