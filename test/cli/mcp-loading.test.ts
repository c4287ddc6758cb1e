import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/folders.js";

// The MCP SDK is loaded by `catherd mcp` only (specs/mcp.md): the programs as they ship (dist/bin, one
// chunk per verb) are read, and every chunk `catherd dispatch` or the supervisor can load — by a static
// import or a dynamic one, at any depth — must be free of it. The SDK's chunk must be reachable from
// `catherd mcp`, so that the check cannot pass by not finding the SDK at all.

const BIN = path.join(ROOT, "dist", "bin");
/** A string of the SDK's protocol code that no catherd module holds. */
const SDK_MARK = "notifications/initialized";

function source(chunk: string): string {
  return fs.readFileSync(path.join(BIN, chunk), "utf8");
}

/** The chunks a chunk imports, statically and dynamically. */
function importsOf(chunk: string): string[] {
  const found = source(chunk).matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)"\.\/([^"]+\.js)"/g);
  return [...new Set([...found].map((m) => m[1] as string))];
}

/** Every chunk reachable from `start`. */
function reachable(start: string): Set<string> {
  const seen = new Set<string>();
  const queue = [start];
  for (let chunk = queue.pop(); chunk !== undefined; chunk = queue.pop()) {
    if (seen.has(chunk)) continue;
    seen.add(chunk);
    queue.push(...importsOf(chunk));
  }
  return seen;
}

/** Every chunk reachable from `start` by static imports alone. */
function staticallyReachable(start: string): Set<string> {
  const seen = new Set<string>();
  const queue = [start];
  for (let chunk = queue.pop(); chunk !== undefined; chunk = queue.pop()) {
    if (seen.has(chunk)) continue;
    seen.add(chunk);
    queue.push(...[...source(chunk).matchAll(/\bfrom\s*"\.\/([^"]+\.js)"/g)].map((m) => m[1] as string));
  }
  return seen;
}

/** The chunk holding the CLI's verb table: catherd.js loads it (after the compile cache is on). */
function cliChunk(): string {
  const found = [...reachable("catherd.js")].find((c) =>
    /\bdispatch: \{\s*load: async \(\) => \(await import\(/.test(source(c)),
  );
  if (found === undefined) throw new Error("no chunk holds the CLI's verb table");
  return found;
}

/** The chunk of a verb, as the CLI's verb table loads it. */
function verbChunk(verb: string): string {
  const found = new RegExp(
    `\\b${verb}: \\{\\s*load: async \\(\\) => \\(await import\\("\\./([^"]+)"\\)\\)`,
  ).exec(source(cliChunk()));
  if (found === null) throw new Error(`no chunk for ${verb} in the CLI's verb table`);
  return found[1] as string;
}

/**
 * What the CLI loads for a verb: catherd.js and its static imports, the verb table's chunk and its static
 * imports, then the verb's chunk and all it loads.
 */
function loadedFor(verb: string): Set<string> {
  return new Set([
    ...staticallyReachable("catherd.js"),
    ...staticallyReachable(cliChunk()),
    ...reachable(verbChunk(verb)),
  ]);
}

const holdsSdk = (chunks: Set<string>) => [...chunks].filter((c) => source(c).includes(SDK_MARK));

describe("the MCP SDK's place in the programs", () => {
  it("is loaded by catherd mcp and by nothing dispatch or the supervisor loads", () => {
    expect(holdsSdk(loadedFor("mcp")).length).toBeGreaterThan(0);
    expect(holdsSdk(loadedFor("dispatch"))).toEqual([]);
    expect(holdsSdk(reachable("supervisor.js"))).toEqual([]);
    for (const verb of [
      "status",
      "wait",
      "result",
      "logs",
      "show",
      "cancel",
      "clean",
      "usage",
      "doctor",
      "guide",
      "lock",
    ]) {
      expect(holdsSdk(loadedFor(verb)), verb).toEqual([]);
    }
  });
});

describe("the dashboard's place in the programs", () => {
  // A string of the dashboard's server that no other module holds (its cookie's name).
  const UI_MARK = "catherd_ui_";
  const holdsUi = (chunks: Set<string>) => [...chunks].filter((c) => source(c).includes(UI_MARK));

  it("is loaded by catherd ui and by nothing another verb, the supervisor, the promoter or the notifier loads", () => {
    expect(holdsUi(loadedFor("ui")).length).toBeGreaterThan(0);
    for (const program of ["supervisor.js", "promoter.js", "notifier.js"]) {
      expect(holdsUi(reachable(program)), program).toEqual([]);
    }
    for (const verb of [
      "dispatch",
      "status",
      "wait",
      "result",
      "logs",
      "show",
      "cancel",
      "clean",
      "doctor",
      "guide",
      "mcp",
    ]) {
      expect(holdsUi(loadedFor(verb)), verb).toEqual([]);
    }
  });
});

describe("the answer validator's place in the programs", () => {
  // A keyword of draft 2020-12 that only the validator's code (ajv's 2020 build) holds.
  const AJV_MARK = "$dynamicAnchor";
  const holdsAjv = (chunks: Iterable<string>) => [...chunks].filter((c) => source(c).includes(AJV_MARK));
  const loadedStatically = (verb: string) =>
    new Set([
      ...staticallyReachable("catherd.js"),
      ...staticallyReachable(cliChunk()),
      ...staticallyReachable(verbChunk(verb)),
    ]);

  it("is imported only when a dispatch has a schema: reachable by a dynamic import, never a static one", () => {
    // dispatch checks a schema at admission; the supervisor (the record writer) checks the answer.
    expect(holdsAjv(loadedFor("dispatch")).length).toBeGreaterThan(0);
    expect(holdsAjv(reachable("supervisor.js")).length).toBeGreaterThan(0);
    expect(holdsAjv(loadedStatically("dispatch"))).toEqual([]);
    expect(holdsAjv(staticallyReachable("supervisor.js"))).toEqual([]);
    for (const verb of ["status", "wait", "result", "show", "logs", "cancel"]) {
      expect(holdsAjv(loadedStatically(verb)), verb).toEqual([]);
    }
  });
});
