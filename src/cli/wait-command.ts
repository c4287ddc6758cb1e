import { awaitRecords } from "../dispatch/await-records.js";
import { overview } from "../dispatch/overview.js";
import { type RunningSnapshot, runningSnapshot } from "../dispatch/snapshot.js";
import { formatDuration, parseDuration } from "../domain/duration.js";
import { CatherdError, WAIT_TIMEOUT_EXIT } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { markSeen } from "../folder/markers.js";
import { type Command, stringOption } from "./kit.js";
import { dispatchDirOf, runPathsOf } from "./resolve.js";
import { errorLines, recordLine } from "./result-command.js";

/** The records that are done and, for each dispatch waited for that is not, what it is doing. */
export interface Waited {
  records: RecordFile[];
  running: RunningSnapshot[];
}

export const waitCommand: Command<Waited> = {
  name: "wait",
  usage: `usage: catherd wait [<name|id>…] [--any] [--timeout <d>] [--run <r>] [--json]

Blocks until every named dispatch (default: every live one of the run) has a record, or with --any until
the first does — for a chain of attempts (--fallback), its last attempt — and prints the records and,
for each one still running, what it is doing. Exit 0 when all printed records are ok, 1 otherwise, 124
on timeout.`,
  options: {
    run: { type: "string", description: "the run to look in (default: $CATHERD_RUN, else default)" },
    any: { type: "boolean", description: "return when the first of them is recorded" },
    timeout: { type: "string", description: "give up after this long (exit 124), e.g. 50s" },
  },
  async handler(input) {
    const timeoutText = stringOption(input, "timeout");
    const timeoutMs = timeoutText === undefined ? null : parseDuration("--timeout", timeoutText);
    const dirs =
      input.positionals.length > 0
        ? [...new Set(input.positionals.map((ref) => dispatchDirOf(input, ref)))]
        : (await overview(runPathsOf(input)))
            .filter((r) => r.state !== "recorded" || r.next !== null)
            .map((r) => r.dir);
    if (dirs.length === 0) {
      throw new CatherdError("E_DISPATCH_NOT_FOUND", "nothing to wait for: no live dispatch in the run", {
        fix: "name the dispatches to wait for, or see catherd status --all",
      });
    }
    const result = await awaitRecords(dirs, { any: input.values.any === true, timeoutMs });
    for (const { dir } of result.records) markSeen(dir);
    const records = result.records.map((r) => r.record);
    const run = runPathsOf(input);
    const running = result.pending.map((dir) => runningSnapshot(run, dir));
    const allOk = records.length > 0 && records.every((r) => r.status === "ok");
    const lines = records.flatMap((r) => [
      recordLine(r),
      ...errorLines(r, { tail: false }).map((l) => `  ${l}`),
    ]);
    if (result.timedOut) lines.push(`timed out with ${result.pending.length} still running`);
    lines.push(...running.map(snapshotLine));
    return {
      data: { records, running },
      text: `${lines.join("\n")}\n`,
      exitCode: result.timedOut ? WAIT_TIMEOUT_EXIT : allOk ? 0 : 1,
    };
  },
};

/** One line about a dispatch still running: "fix-tests running 3m12s: tool open 40s: cargo build". */
function snapshotLine(s: RunningSnapshot): string {
  const age = s.secs === null ? "" : ` ${formatDuration(s.secs * 1000)}`;
  // A heavy slot says more than the tool call that runs `catherd lock`: `doing` names it then.
  const doing =
    s.heavy === null && s.openToolCall !== null
      ? `: tool open ${formatDuration(s.openToolCall.openSecs * 1000)}: ${s.openToolCall.label}`
      : s.doing === null
        ? ""
        : `: ${s.doing}`;
  return `  ${s.name ?? s.dispatchId} ${s.state}${attemptSuffix(s)}${age}${doing}`;
}

/** " (attempt 2, claude-code)" for a chain's later attempt, "" for a first one. */
export function attemptSuffix(s: Pick<RunningSnapshot, "attempt" | "backend">): string {
  return s.attempt > 1 ? ` (attempt ${s.attempt}, ${s.backend ?? "?"})` : "";
}
