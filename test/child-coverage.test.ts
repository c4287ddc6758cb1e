import { describe, expect, it } from "vitest";
import { addHits, type FileCoverageData } from "./helpers/child-coverage.js";

// How a spawned program's coverage is added to vitest's (test/helpers/child-coverage.ts): functions are
// matched by where they are declared, and a method with a TypeScript modifier on one side only.

const range = (line: number, column: number) => ({
  start: { line, column },
  end: { line: line + 2, column: 3 },
});

function file(fns: [string, number, number][], hits: number[] = []): FileCoverageData {
  const fnMap = Object.fromEntries(
    fns.map(([name, line, column], i) => [
      String(i),
      { name, decl: range(line, column), loc: range(line, column), line },
    ]),
  );
  const f = Object.fromEntries(fns.map((_, i) => [String(i), hits[i] ?? 0]));
  return { path: "src/x.ts", statementMap: {}, fnMap, branchMap: {}, s: {}, f, b: {} };
}

describe("adding a spawned program's function hits", () => {
  it("matches a function by its declaration's start", () => {
    const into = file([["run", 3, 2]]);
    expect(addHits(into, file([["run", 3, 2]], [4]))).toBe(0);
    expect(into.f["0"]).toBe(4);
  });

  it("matches `private async run()` declared at the modifier on one side, at the name on the other", () => {
    const into = file([["run", 3, 2]]);
    expect(addHits(into, file([["run", 3, 16]], [2]))).toBe(0);
    expect(into.f["0"]).toBe(2);
  });

  it("leaves unmatched what shares its line with another function", () => {
    const into = file([
      ["outer", 3, 2],
      ["inner", 3, 30],
    ]);
    expect(addHits(into, file([["?", 3, 10]], [1]))).toBe(1);
    expect(into.f).toEqual({ "0": 0, "1": 0 });
  });
});
