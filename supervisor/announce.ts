import { recordHeadline, whyLine } from "../src/domain/ending/record-words.js";
import { FILES } from "../src/folder/layout.js";
import { readFolderJson } from "../src/folder/read.js";
import { okValue } from "../src/infra/json-file.js";

/**
 * `catherd supervise` in the foreground says how the dispatch ended, as `result` heads it: its record's
 * line, and its error's ("error: spawn — cannot run …"); with --json, `{record}`. The detached supervisor
 * says nothing: its stdout is supervisor.out, which stays empty unless it crashes.
 */
export function announceRecord(dir: string, json: boolean, nowMs: number): void {
  const record = okValue(readFolderJson(dir, FILES.record));
  if (record === null) return;
  if (json) {
    process.stdout.write(`${JSON.stringify({ record })}\n`);
    return;
  }
  const error = record.error === null ? "" : `\nerror: ${whyLine(record.error, nowMs)}`;
  process.stdout.write(`${recordHeadline(record)}${error}\n`);
}
