// @ts-check
// Ingestion, in this process on the bench's own node: LineReader + backend.parse over ~INGEST_MB of
// recorded lines, read in the supervisor's bites, against `wc -l`.
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { DIST, INGEST_MB, RECORDED, REPS } from "../lib/config.mjs";
import { timed } from "../lib/spawn.mjs";
import { stats } from "../lib/stats.mjs";

/**
 * A module of the build, typed as its source.
 * @template T
 * @param {string} file under dist/, e.g. "src/infra/line-reader.js"
 * @returns {Promise<T>}
 */
const fromDist = (file) => import(pathToFileURL(path.join(DIST, file)).href);

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchIngest(ctx) {
  console.log(`\n[ingest] ~${INGEST_MB} MB of recorded lines, one core, in-process (dist/)`);
  const { LineReader } = /** @type {typeof import("../../src/infra/line-reader.js")} */ (
    await fromDist("src/infra/line-reader.js")
  );
  const { codexBackend } = /** @type {typeof import("../../src/backends/codex.js")} */ (
    await fromDist("src/backends/codex.js")
  );
  const { claudeCodeBackend } = /** @type {typeof import("../../src/backends/claude-code.js")} */ (
    await fromDist("src/backends/claude-code.js")
  );
  const { initialWatch, observe } = /** @type {typeof import("../../src/domain/watch/watch.js")} */ (
    await fromDist("src/domain/watch/watch.js")
  );
  const { ActivityWriter } = /** @type {typeof import("../../supervisor/activity.js")} */ (
    await fromDist("supervisor/activity.js")
  );
  // The supervisor's bite per read.
  const { POLL_BUDGET_BYTES: BUDGET } = /** @type {typeof import("../../supervisor/watch-loop.js")} */ (
    await fromDist("supervisor/watch-loop.js")
  );
  const { report } = ctx;
  report.extra.ingestBudgetBytes = BUDGET;
  /** @type {[string, import("../../src/backends/types.js").Backend, string][]} */
  const streams = [
    ["codex", codexBackend, "codex"],
    ["claude", claudeCodeBackend, "claude"],
  ];
  for (const [label, backend, folder] of streams) {
    const dir = path.join(RECORDED, folder);
    const unit = Buffer.concat(
      fs
        .readdirSync(dir)
        .filter((n) => n.endsWith(".jsonl"))
        .sort()
        .map((n) => {
          const b = fs.readFileSync(path.join(dir, n));
          return b.length > 0 && b[b.length - 1] !== 10 ? Buffer.concat([b, Buffer.from("\n")]) : b;
        }),
    );
    const unitLines = unit.toString("utf8").split("\n").length - 1;
    const chunk = Buffer.concat(Array(Math.max(1, Math.floor((1 << 20) / unit.length))).fill(unit));
    const file = path.join(ctx.scratch.root, `ingest-${label}.jsonl`);
    const fd = fs.openSync(file, "w");
    let size = 0;
    let lines = 0;
    while (size < INGEST_MB * 1e6) {
      fs.writeSync(fd, chunk);
      size += chunk.length;
      lines += (chunk.length / unit.length) * unitLines;
    }
    fs.closeSync(fd);
    const mb = size / 1e6;
    /** @param {"read" | "parse" | "loop"} mode */
    const pass = (mode) => {
      const reader = new LineReader(file);
      let state = initialWatch(0);
      const activity = new ActivityWriter(ctx.scratch.root, { writeJson() {}, createJson: () => true });
      let count = 0;
      let progress = 0;
      const t0 = performance.now();
      for (;;) {
        const read = reader.read(BUDGET);
        for (const line of read.lines) {
          count += 1;
          if (mode === "read") continue;
          const facts = backend.parse(line);
          if (facts.progress) progress += 1;
          if (mode === "loop") {
            state = observe(state, facts, count);
            activity.note(facts);
          }
        }
        if (read.bytes === 0) break;
      }
      const secs = (performance.now() - t0) / 1000;
      reader.close();
      if (count !== lines) throw new Error(`read ${count} lines of ${lines}`);
      return { secs, progress };
    };
    /** @type {number[]} */ const wc = [];
    /** @type {number[]} */ const readOnly = [];
    /** @type {number[]} */ const parse = [];
    /** @type {number[]} */ const loop = [];
    for (let i = -1; i < REPS.ingest; i++) {
      const w = await timed("wc", ["-l", file]);
      const a = pass("read");
      const b = pass("parse");
      const c = pass("loop");
      if (i < 0) continue;
      wc.push(mb / (w.ms / 1000));
      readOnly.push(mb / a.secs);
      parse.push(mb / b.secs);
      loop.push(mb / c.secs);
    }
    const wcBase = { name: "wc -l", value: stats(wc).median, unit: "MB/s" };
    const linesPerMb = lines / mb;
    report.row({
      key: `ingest.${label}.wc`,
      what: `ingest ${label}: baseline wc -l`,
      unit: "MB/s",
      samples: wc,
    });
    report.row({
      key: `ingest.${label}.read`,
      what: `ingest ${label}: LineReader only`,
      unit: "MB/s",
      samples: readOnly,
      baseline: wcBase,
    });
    const row = report.row({
      key: `ingest.${label}.parse`,
      what: `ingest ${label}: LineReader + parse`,
      unit: "MB/s",
      samples: parse,
      baseline: wcBase,
      target: { text: "≥ 100 MB/s", ok: (s) => s.median >= 100 },
    });
    report.row({
      key: `ingest.${label}.parseLines`,
      what: `ingest ${label}: LineReader + parse, lines`,
      unit: "klines/s",
      samples: parse.map((v) => (v * linesPerMb) / 1000),
    });
    report.row({
      key: `ingest.${label}.loop`,
      what: `ingest ${label}: + observe + activity (loop body)`,
      unit: "MB/s",
      samples: loop,
      baseline: wcBase,
    });
    report.extra[`ingest.${label}`] = {
      file: { mb, lines, avgLineBytes: size / lines },
      parseMedian: row.median,
    };
    fs.rmSync(file, { force: true });
  }
}
