import * as fs from "node:fs";
import * as path from "node:path";
import { DEMO_DISPATCHES_ENV } from "../demo/dispatches-env.js";
import { SIMULATED_AGENT_FORMAT } from "../demo/wire-format.js";
import { startDispatch } from "../dispatch/dispatch.js";
import { validateDispatch } from "../dispatch/request/dispatch-request.js";
import { CatherdError } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { formatDuration } from "../domain/text/duration.js";
import { humanLine } from "../folder/human-line.js";
import { FILES, fileIn } from "../folder/layout.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { LineReader } from "../infra/line-reader.js";
import { catherdHome } from "../infra/paths.js";
import { programFile } from "../infra/programs.js";
import { waitUntil } from "../infra/wait-until.js";
import type { Command } from "./command-io.js";
import { paint } from "./render.js";
import { recordLine } from "./result-command.js";

const POLL_MS = 100;
const DEMO_TIMEOUT_MS = 60_000;

export const demoCommand: Command<{ record: RecordFile; home: string }> = {
  name: "demo",
  synopsis: "",
  positionals: 0,
  summary:
    `Dispatches an embedded simulated agent (it speaks ${SIMULATED_AGENT_FORMAT}'s event format) into the ` +
    "run demo of the catherd home (CATHERD_HOME, else ~/.local/share/catherd), shows its progress live — tool calls, " +
    "a stall notice it recovers from, its answer — then its record. The agent works in the home's demo/ " +
    "folder; catherd clean removes the dispatch like any other.",
  json: "{record, home}",
  options: {},
  async handler(input) {
    const home = catherdHome();
    const workplace = path.join(home, "demo");
    fs.mkdirSync(workplace, { recursive: true });
    const agent = writeAgentLauncher(workplace);
    const brief = "Make `npm test` pass: one test of src/sum.ts fails.";
    const request = validateDispatch({
      backend: SIMULATED_AGENT_FORMAT,
      name: "demo",
      run: "demo",
      cwd: workplace,
      env: [`${DEMO_DISPATCHES_ENV}=${path.join(home, "runs", "demo", "dispatches", "demo")}`],
      brief: Buffer.from(brief),
      idle: "4s",
      bin: agent,
      rest: [],
      environment: process.env,
    });
    const out = (line: string) => {
      if (!input.json) process.stdout.write(`${line}\n`);
    };
    out(
      paint(
        `catherd demo: a simulated ${SIMULATED_AGENT_FORMAT} agent, supervised (catherd home ${home})`,
        "bold",
      ),
    );
    out(`brief: ${brief}`);
    const { admitted, supervisorPid } = await startDispatch(request, { home, clock: systemClock });
    out(
      `dispatched ${admitted.name} (${admitted.dispatchId}), supervisor pid ${supervisorPid}, idle limit ${formatDuration(admitted.spec.idleMs)}\n`,
    );
    const record = await follow(admitted.dir, (line) => humanLine(request.backend, line), {
      stallMs: admitted.spec.stallMs,
      out,
      clock: systemClock,
    });
    out("");
    out(paint(recordLine(record), record.status === "ok" ? "green" : "red"));
    out(`reply: ${record.reply ?? "(none)"}`);
    out(`\nthe dispatch folder: ${admitted.dir}`);
    out(`look around: npx catherd status --run demo --all`);
    return { data: { record, home }, text: "", exitCode: record.status === "ok" ? 0 : 1 };
  },
};

/** Prints each event as a human line with its time, and the stall notice when it comes; returns the record. */
async function follow(
  dir: string,
  human: (line: string) => string | null,
  { stallMs, out, clock }: { stallMs: number; out: (line: string) => void; clock: Clock },
): Promise<RecordFile> {
  const reader = new LineReader(fileIn(dir, FILES.events));
  const started = clock.now();
  const stamp = () => paint(`${((clock.now() - started) / 1000).toFixed(1).padStart(5)}s`, "dim");
  let stallShown = false;
  try {
    const record = await waitUntil(
      () => {
        // The notice before the lines: the agent answers only once it has seen the notice.
        if (!stallShown && fs.existsSync(fileIn(dir, FILES.stall))) {
          stallShown = true;
          const notice = `stall notice: quiet for ${formatDuration(stallMs)} with no tool call open (stall.json); still watching`;
          out(`${stamp()}  ${paint(notice, "yellow")}`);
        }
        for (const line of reader.read().lines) {
          const shown = human(line);
          if (shown !== null) out(`${stamp()}  ${shown}`);
        }
        const recordFile = fileIn(dir, FILES.record);
        if (!fs.existsSync(recordFile)) return undefined;
        return JSON.parse(fs.readFileSync(recordFile, "utf8")) as RecordFile;
      },
      { clock, deadline: started + DEMO_TIMEOUT_MS, pollMs: POLL_MS },
    );
    if (record === undefined) {
      throw new CatherdError("E_TIMEOUT", `the demo did not finish within ${DEMO_TIMEOUT_MS} ms`, {
        fix: `see what its supervisor did: cat ${fileIn(dir, FILES.supervisorLog)}`,
      });
    }
    return record;
  } finally {
    reader.close();
  }
}

/**
 * A tiny executable that runs the simulated agent with this node: what `--bin` points at. Written afresh
 * each time (atomically, so that a demo already running keeps the one it started), for this node and build.
 */
function writeAgentLauncher(workplace: string): string {
  const script = programFile("simulated-agent", import.meta.url);
  const launcher = path.join(workplace, `simulated-${SIMULATED_AGENT_FORMAT}`);
  const draft = `${launcher}.${process.pid}.tmp`;
  fs.writeFileSync(draft, `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(script)} "$@"\n`, {
    mode: 0o700,
  });
  fs.renameSync(draft, launcher);
  return launcher;
}

function quote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}
