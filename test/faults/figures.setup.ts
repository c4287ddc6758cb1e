import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { TestProject } from "vitest/node";

// vitest globalSetup of the fault suite: starts the figures afresh, and at the end prints one line per row
// of the matrix (tried, passed, lost, left running) for specs/reliability.md.

declare module "vitest" {
  export interface ProvidedContext {
    /** The file every fault test appends its figures to, one per run of the suite. */
    figuresFile: string;
  }
}

let figuresFile = "";

export function setup(project: TestProject): void {
  figuresFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "catherd-fault-figures-")), "figures.jsonl");
  project.provide("figuresFile", figuresFile);
}

export function teardown(): void {
  // A setup that never ran (another global setup refused first) made no folder to remove.
  if (figuresFile === "") return;
  let text = "";
  try {
    text = fs.readFileSync(figuresFile, "utf8");
  } catch {
    fs.rmSync(path.dirname(figuresFile), { recursive: true, force: true });
    return;
  }
  const rows = new Map<
    string,
    { tried: number; passed: number; lost: number; leftRunning: number; notes: string[] }
  >();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const f = JSON.parse(line) as {
      row: string;
      tried: number;
      passed: number;
      lost: number;
      leftRunning: number;
      notes?: string[];
    };
    const sum = rows.get(f.row) ?? { tried: 0, passed: 0, lost: 0, leftRunning: 0, notes: [] };
    sum.notes.push(...(f.notes ?? []));
    sum.tried += f.tried;
    sum.passed += f.passed;
    sum.lost += f.lost;
    sum.leftRunning += f.leftRunning;
    rows.set(f.row, sum);
  }
  const lines = ["| row | tried | passed | lost | left running | notes |", "|---|---|---|---|---|---|"];
  for (const [row, s] of [...rows].sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true }))) {
    lines.push(
      `| ${row} | ${s.tried} | ${s.passed} | ${s.lost} | ${s.leftRunning} | ${s.notes.join("; ")} |`,
    );
  }
  process.stdout.write(`\nfault matrix figures:\n${lines.join("\n")}\n`);
  fs.rmSync(path.dirname(figuresFile), { recursive: true, force: true });
}
