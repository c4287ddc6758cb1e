// @ts-check
// Cold import cost of each module, in a fresh node each time: time, RSS and peak after the import.
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { BASE_ENV, DIST, REPS } from "../lib/config.mjs";
import { timed } from "../lib/spawn.mjs";
import { fmt, stats } from "../lib/stats.mjs";

/** Imports BENCH_PROBE (if set) and prints what it cost, as JSON. */
const PROBE = [
  "import * as fs from 'node:fs';",
  "const spec = process.env.BENCH_PROBE;",
  "const t0 = performance.now();",
  "if (spec) await import(spec);",
  "const ms = performance.now() - t0;",
  "const st = fs.readFileSync('/proc/self/status', 'utf8');",
  "const kb = (k) => Number(new RegExp(k + ':\\\\s+(\\\\d+)').exec(st)[1]);",
  "const cpu = process.cpuUsage();",
  "process.stdout.write(JSON.stringify({ ms, rss: kb('VmRSS'), hwm: kb('VmHWM'), cpuMs: (cpu.user + cpu.system) / 1000 }));",
].join("\n");

/** @param {string} p */
const dist = (p) => pathToFileURL(path.join(DIST, p)).href;

/** [label, import specifier]: what the probe imports. @type {[string, string][]} */
const MODULES = [
  ["(nothing)", ""],
  ["zod", "zod"],
  ["proper-lockfile", "proper-lockfile"],
  ["ps-list", "ps-list"],
  ["src/domain/schemas.js (zod schemas)", dist("src/domain/schemas.js")],
  ["src/backends/backend-registry.js", dist("src/backends/backend-registry.js")],
  ["src/cli/command-io.js", dist("src/cli/command-io.js")],
  ["src/dispatch/request/dispatch-request.js", dist("src/dispatch/request/dispatch-request.js")],
  ["src/dispatch/admission.js", dist("src/dispatch/admission.js")],
  ["src/dispatch/start/launch.js", dist("src/dispatch/start/launch.js")],
  ["src/cli/dispatch-command.js (all of dispatch)", dist("src/cli/dispatch-command.js")],
  ["supervisor/supervisor-main.js (all of the supervisor's start)", dist("supervisor/supervisor-main.js")],
  ["src/folder/record.js (supervisor, at the end)", dist("src/folder/record.js")],
  ["src/cli/status-command.js", dist("src/cli/status-command.js")],
  ["src/cli/mcp/mcp-server.js (the MCP SDK: catherd mcp only)", dist("src/cli/mcp/mcp-server.js")],
];

/** @param {import("../lib/context.mjs").BenchContext} ctx */
export async function benchImports(ctx) {
  console.log("\n[imports] cold import of one module in a fresh node (ms inside the process; RSS after)");
  const table = [];
  for (const [label, spec] of MODULES) {
    /** @type {number[]} */ const inProc = [];
    /** @type {number[]} */ const wall = [];
    /** @type {number[]} */ const rss = [];
    /** @type {number[]} */ const hwm = [];
    /** @type {number[]} */ const cpu = [];
    for (let i = -1; i < REPS.imports; i++) {
      const r = await timed(ctx.node, ["--input-type=module", "-e", PROBE], {
        env: { ...BASE_ENV, BENCH_PROBE: spec },
      });
      if (i < 0) continue;
      const v = JSON.parse(r.out);
      inProc.push(v.ms);
      wall.push(r.ms);
      rss.push(v.rss / 1024);
      hwm.push(v.hwm / 1024);
      cpu.push(v.cpuMs);
    }
    const row = {
      module: label,
      importMs: stats(inProc).median,
      processMs: stats(wall).median,
      cpuMs: stats(cpu).median,
      rssMiB: stats(rss).median,
      hwmMiB: stats(hwm).median,
    };
    table.push(row);
    console.log(
      `  ${label.padEnd(52)} import ${fmt(row.importMs, 1).padStart(6)} ms  process ${fmt(row.processMs).padStart(4)} ms  RSS ${fmt(row.rssMiB, 1)} MiB  peak ${fmt(row.hwmMiB, 1)} MiB`,
    );
  }
  ctx.report.extra.imports = table;
}
