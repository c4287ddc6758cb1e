import type { Backend } from "../backends/types.js";
import { addDropped, addFacts, emptySummary, type StreamSummary } from "../domain/ending/summary.js";
import { foldWindows } from "../domain/spend/quota.js";
import { PROGRESS } from "../domain/watch/facts.js";
import { okValue } from "../infra/json-file.js";
import { LineReader, type ReadResult } from "../infra/line-reader.js";
import { FILES, fileIn } from "./layout.js";
import { readFolderJson } from "./read.js";
import { parseUsageLine } from "./usage-file.js";

/**
 * Folds a dispatch's events.jsonl and stderr.log through its backend, then usage.jsonl and quota.json, in
 * bounded memory: the record is made from the files, so the supervisor and a reader recording a lost
 * dispatch reach the same verdict. quota.json holds what the CLI's usage log reported of its windows
 * (codex's rollout) besides what its stream did.
 */
export function summarizeDispatch(dir: string, backend: Backend): StreamSummary {
  const summary = emptySummary();
  fold(fileIn(dir, FILES.events), (line) => backend.parse(line), summary, { countDropped: true });
  fold(fileIn(dir, FILES.stderr), backend.parseStderr ?? (() => PROGRESS), summary);
  fold(fileIn(dir, FILES.usage), parseUsageLine, summary);
  const kept = okValue(readFolderJson(dir, FILES.quota))?.windows ?? [];
  summary.quota = foldWindows(
    summary.quota,
    kept.map((w) => ({ ...w, status: w.status ?? null })),
  );
  return summary;
}

/** Folded in bites of this much input, as the supervisor reads it: the peak memory stays flat. */
const REPLAY_CHUNK_BYTES = 1024 * 1024;

/**
 * Folds one file's lines. `countDropped`: lines over the reader's limit are counted in the summary after
 * the lines read with them (the final message may have been in one: src/domain/ending/answer-contract.ts).
 */
function fold(
  file: string,
  parse: Backend["parse"],
  summary: StreamSummary,
  { countDropped = false }: { countDropped?: boolean } = {},
): void {
  const reader = new LineReader(file);
  const take = (read: ReadResult) => {
    for (const line of read.lines) addFacts(summary, safe(parse, line));
    if (countDropped && read.dropped > 0) addDropped(summary, read.dropped);
  };
  try {
    for (let read = reader.read(REPLAY_CHUNK_BYTES); read.bytes > 0; read = reader.read(REPLAY_CHUNK_BYTES)) {
      take(read);
    }
    take(reader.flush());
  } finally {
    reader.close();
  }
}

function safe(parse: Backend["parse"], line: string) {
  try {
    return parse(line);
  } catch {
    return PROGRESS;
  }
}
