#!/usr/bin/env node
// The embedded simulated agent of `catherd demo`: it speaks `codex exec --json` (the format of the recorded
// streams in test/fixtures/recorded/codex/) and names its threads as codex does (a UUID v7). It answers
// `--version` as codex does; else it reads its brief on stdin to EOF. A new thread runs a few "tool
// calls", goes quiet until the supervisor's stall notice, recovers, and answers; a resumed one (`exec
// resume THREAD`, a follow-up or a repair turn) answers on the same thread at once. Under
// `--output-schema FILE` its answer is JSON that fits the schema; CATHERD_SIMULATED_PACE scales its pauses.
// Nothing to install, no network.
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { exampleOf } from "../demo/answer-example.js";
import { codexThreadId, readCodexArgv } from "../demo/codex-argv.js";
import { DEMO_DISPATCHES_ENV, SIMULATED_PACE_ENV } from "../demo/dispatches-env.js";
import { SIMULATED_AGENT_VERSION } from "../demo/wire-format.js";

if (process.argv.includes("--version")) {
  process.stdout.write(`${SIMULATED_AGENT_VERSION}\n`);
  process.exit(0);
}
const argv = readCodexArgv(process.argv.slice(2));
const brief = fs.readFileSync(0, "utf8").trim();
const say = (event: unknown) => fs.writeSync(1, `${JSON.stringify(event)}\n`);
const pace = Number(process.env[SIMULATED_PACE_ENV] ?? "1");
const pause = (ms: number) =>
  new Promise((resolve) => setTimeout(resolve, Number.isFinite(pace) && pace >= 0 ? ms * pace : ms));
const command = (id: string, cmd: string, output: string, exitCode: number) => ({
  id,
  type: "command_execution",
  command: `/bin/bash -lc '${cmd}'`,
  aggregated_output: output,
  exit_code: exitCode,
  status: "completed",
});

/** The final message: JSON that fits `--output-schema` when given one, else prose. */
function answer(prose: string): string {
  if (argv.outputSchema === null) return prose;
  try {
    return JSON.stringify(exampleOf(JSON.parse(fs.readFileSync(argv.outputSchema, "utf8"))));
  } catch {
    return prose;
  }
}

/** Quiet with no tool call open until the supervisor's stall notice, however slow the machine. */
async function quietUntilNoticed(): Promise<void> {
  const dispatches = process.env[DEMO_DISPATCHES_ENV];
  const dispatchId = process.env.CATHERD_DISPATCH;
  if (dispatches === undefined || dispatchId === undefined) {
    await pause(2600); // run by hand: long enough for a 2 s stall notice, short of a 4 s idle limit
    return;
  }
  const stallNotice = path.join(dispatches, dispatchId, "stall.json");
  while (!fs.existsSync(stallNotice)) await new Promise((resolve) => setTimeout(resolve, 50));
  await pause(500); // recovering: the answer follows the notice visibly
}

async function newThread(): Promise<string> {
  say({ type: "thread.started", thread_id: codexThreadId(Date.now(), randomBytes(10).toString("hex")) });
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
  await quietUntilNoticed();
  return answer(
    `Done: ${brief.slice(0, 60)}\nFixed an off-by-one in src/sum.ts; npm test passes (12 tests).`,
  );
}

async function resumedThread(thread: string): Promise<string> {
  say({ type: "thread.started", thread_id: thread });
  say({ type: "turn.started" });
  await pause(300);
  say({ type: "item.completed", item: { id: "item_0", type: "reasoning", text: "Picking the thread up." } });
  return answer(`Followed up: ${brief.slice(0, 60)}\nNothing more to change; npm test passes (12 tests).`);
}

const text = argv.resume === null ? await newThread() : await resumedThread(argv.resume);
say({ type: "item.completed", item: { id: "item_5", type: "agent_message", text } });
say({
  type: "turn.completed",
  usage: { input_tokens: 18_240, cached_input_tokens: 12_032, output_tokens: 611 },
});
