import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { mergeProcessCovs, type ProcessCov } from "@bcoe/v8-coverage";
import convert from "ast-v8-to-istanbul";
import { parseAstAsync } from "vitest/node";

// Coverage of the programs the tests spawn — the bundled CLI and supervisor in dist/bin, run as real
// processes — folded into the coverage vitest collects in its own workers. Each spawned node writes V8's
// block coverage to CHILD_COVERAGE_DIR when it exits (NODE_V8_COVERAGE, which node passes on to every
// descendant); after the run the files are summed per script, mapped back to src/ and supervisor/ through
// the bundle's source maps (scripts/bundle.mjs), and counted on the statements, functions and branches
// vitest already lists for each file. A process killed by SIGKILL writes nothing: its coverage is lost.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** Where spawned processes write their coverage: inside vitest's reports directory, emptied by each run. */
export const CHILD_COVERAGE_DIR = path.join(ROOT, "coverage/.children");
/** The scripts whose coverage counts: the bundle the tests run. */
const BUNDLE_URL = pathToFileURL(path.join(ROOT, "dist/bin")).href;
/** Files summed in one merge: bounds the memory held while thousands of process files are read. */
const MERGE_BATCH = 64;

interface Position {
  line: number;
  column: number;
}
interface Range {
  start: Position;
  end: Position;
}
/** One file's istanbul coverage: the shape vitest's coverage map holds and reports. */
export interface FileCoverageData {
  path: string;
  statementMap: Record<string, Range>;
  fnMap: Record<string, { name: string; decl: Range; loc: Range; line: number }>;
  branchMap: Record<string, { loc: Range; type: string; locations: Range[]; line: number }>;
  s: Record<string, number>;
  f: Record<string, number>;
  b: Record<string, number[]>;
}
/** The part of istanbul's CoverageMap this module uses. */
export interface CoverageMapLike {
  files(): string[];
  fileCoverageFor(file: string): { data: FileCoverageData };
  addFileCoverage(data: FileCoverageData): void;
}

/** What folding found, for the run's log. */
export interface FoldSummary {
  processes: number;
  scripts: number;
  files: number;
  /** Child items with no counterpart in vitest's structure for their file: not counted. */
  unmatched: number;
}

/** Sums the coverage files of every exited process, keeping only the bundle's scripts. */
export function readChildCoverage(dir: string): { merged: ProcessCov; processes: number } {
  let merged: ProcessCov = { result: [] };
  let processes = 0;
  const names = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith(".json")) : [];
  for (let i = 0; i < names.length; i += MERGE_BATCH) {
    const batch: ProcessCov[] = [merged];
    for (const name of names.slice(i, i + MERGE_BATCH)) {
      let cov: ProcessCov;
      try {
        cov = JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")) as ProcessCov;
      } catch {
        continue; // a process still writing it as the run ends: its coverage is not counted
      }
      processes += 1;
      batch.push({ result: cov.result.filter((script) => script.url.startsWith(BUNDLE_URL)) });
    }
    merged = mergeProcessCovs(batch);
  }
  return { merged, processes };
}

/** One bundled script's coverage as istanbul data for the source files its map names. */
async function convertScript(
  script: ProcessCov["result"][number],
): Promise<Record<string, FileCoverageData>> {
  const file = fileURLToPath(script.url);
  const mapFile = `${file}.map`;
  // A chunk without a map holds no code of ours (a re-export, rolldown's runtime helpers).
  if (!fs.existsSync(mapFile)) return {};
  const code = fs.readFileSync(file, "utf8");
  const sourceMap = JSON.parse(fs.readFileSync(mapFile, "utf8")) as { version: number; sources: string[] };
  sourceMap.sources = sourceMap.sources.map((source) => new URL(source, script.url).href);
  const data = await convert({
    code,
    sourceMap: sourceMap as NonNullable<Parameters<typeof convert>[0]["sourceMap"]>,
    ast: parseAstAsync(code),
    coverage: { functions: script.functions, url: script.url },
  });
  return data as unknown as Record<string, FileCoverageData>;
}

const at = (p: Position) => `${p.line}:${p.column}`;

/**
 * Adds `child`'s hits to `into`, item by item, matched by where each starts in the source (statements),
 * by its declaration (functions), by kind and start (branches): the bundle and vitest's own transform map
 * the same code to the same starts, while their ends can differ by a line. An item vitest does not list is
 * not counted (returned), so the totals stay vitest's.
 */
export function addHits(into: FileCoverageData, child: FileCoverageData): number {
  let unmatched = 0;
  const statements = new Map(Object.entries(into.statementMap).map(([k, r]) => [at(r.start), k]));
  for (const [k, range] of Object.entries(child.statementMap)) {
    const key = statements.get(at(range.start));
    if (key === undefined) unmatched += 1;
    else into.s[key] = (into.s[key] ?? 0) + (child.s[k] ?? 0);
  }
  const functions = new Map(Object.entries(into.fnMap).map(([k, fn]) => [at(fn.decl.start), k]));
  const onLine = functionsByLine(into);
  for (const [k, fn] of Object.entries(child.fnMap)) {
    // A method with a TypeScript modifier (`private async run()`) is declared at the modifier by one map
    // and at the name by the other: on the same line, the one function declared there is the same.
    const alone = onLine.get(fn.decl.start.line);
    const key = functions.get(at(fn.decl.start)) ?? (alone?.length === 1 ? alone[0] : undefined);
    if (key === undefined) unmatched += 1;
    else into.f[key] = (into.f[key] ?? 0) + (child.f[k] ?? 0);
  }
  const branches = new Map(
    Object.entries(into.branchMap).map(([k, br]) => [
      `${br.type} ${at(br.loc.start)} ${br.locations.length}`,
      k,
    ]),
  );
  for (const [k, br] of Object.entries(child.branchMap)) {
    const key = branches.get(`${br.type} ${at(br.loc.start)} ${br.locations.length}`);
    const hits = into.b[key ?? ""];
    if (key === undefined || hits === undefined) {
      unmatched += 1;
      continue;
    }
    into.b[key] = hits.map((n, i) => n + (child.b[k]?.[i] ?? 0));
  }
  return unmatched;
}

/** The functions of a file by the line they are declared on. */
function functionsByLine(file: FileCoverageData): Map<number, string[]> {
  const lines = new Map<number, string[]>();
  for (const [k, fn] of Object.entries(file.fnMap)) {
    lines.set(fn.decl.start.line, [...(lines.get(fn.decl.start.line) ?? []), k]);
  }
  return lines;
}

/**
 * Folds the spawned processes' coverage into `map`: into the file's existing entry when vitest has one,
 * else as a new entry. Only files `isIncluded` accepts count. The process files are removed once read.
 */
export async function foldChildCoverage(
  map: CoverageMapLike,
  isIncluded: (file: string) => boolean,
  dir = CHILD_COVERAGE_DIR,
): Promise<FoldSummary> {
  const { merged, processes } = readChildCoverage(dir);
  const known = new Set(map.files());
  const touched = new Set<string>();
  let unmatched = 0;
  for (const script of merged.result) {
    for (const [file, data] of Object.entries(await convertScript(script))) {
      if (!isIncluded(file)) continue;
      touched.add(file);
      if (known.has(file)) unmatched += addHits(map.fileCoverageFor(file).data, data);
      else {
        map.addFileCoverage(data);
        known.add(file);
      }
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return { processes, scripts: merged.result.length, files: touched.size, unmatched };
}
