import { awaitRecords } from "../dispatch/await-records.js";
import { overview } from "../dispatch/overview.js";
import { parseDuration } from "../domain/duration.js";
import { CatherdError, WAIT_TIMEOUT_EXIT } from "../domain/errors.js";
import type { RecordFile } from "../domain/schemas.js";
import { markSeen } from "../folder/markers.js";
import { type Command, stringOption } from "./kit.js";
import { dispatchDirOf, runPathsOf } from "./resolve.js";
import { errorLines, recordLine } from "./result-command.js";

export const waitCommand: Command<{ records: RecordFile[] }> = {
  name: "wait",
  usage: `usage: catherd wait [<name|id>…] [--any] [--timeout <d>] [--run <r>] [--json]

Blocks until every named dispatch (default: every live one of the run) has a record, or with --any until
the first does, and prints the records. Exit 0 when all printed records are ok, 1 otherwise, 124 on
timeout.`,
  options: { run: { type: "string" }, any: { type: "boolean" }, timeout: { type: "string" } },
  async handler(input) {
    const timeoutText = stringOption(input, "timeout");
    const timeoutMs = timeoutText === undefined ? null : parseDuration("--timeout", timeoutText);
    const dirs =
      input.positionals.length > 0
        ? [...new Set(input.positionals.map((ref) => dispatchDirOf(input, ref)))]
        : (await overview(runPathsOf(input))).filter((r) => r.state !== "recorded").map((r) => r.dir);
    if (dirs.length === 0) {
      throw new CatherdError("E_DISPATCH_NOT_FOUND", "nothing to wait for: no live dispatch in the run", {
        fix: "name the dispatches to wait for, or see catherd status --all",
      });
    }
    const result = await awaitRecords(dirs, { any: input.values.any === true, timeoutMs });
    for (const { dir } of result.records) markSeen(dir);
    const records = result.records.map((r) => r.record);
    const allOk = records.length > 0 && records.every((r) => r.status === "ok");
    const lines = records.flatMap((r) => [
      recordLine(r),
      ...errorLines(r, { tail: false }).map((l) => `  ${l}`),
    ]);
    if (result.timedOut) lines.push(`timed out with ${result.pending.length} still running`);
    return {
      data: { records },
      text: `${lines.join("\n")}\n`,
      exitCode: result.timedOut ? WAIT_TIMEOUT_EXIT : allOk ? 0 : 1,
    };
  },
};
