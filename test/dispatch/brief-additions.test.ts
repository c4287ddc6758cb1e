import { describe, expect, it } from "vitest";
import { dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";

// The brief is judged as given, before catherd adds --lock-hint's line or --outcome's contract
// (specs/dispatch.md, "A request's concerns"): what it adds never makes an empty brief a brief.

const cases = [
  {
    title: "a brief of only white space with --lock-hint",
    args: ["--backend", "codex", "--bin", "/bin/true", "--brief", "   ", "--lock-hint"],
    mentions: "is only white space",
  },
  {
    title: "an empty brief with --outcome",
    args: ["--backend", "codex", "--bin", "/bin/true", "--brief=", "--outcome"],
    mentions: "is empty",
  },
];

describe("catherd dispatch judges the brief before it adds to it", () => {
  it.each(cases)("refuses $title with E_INPUT_INVALID, exit 2, writing nothing", async (c) => {
    const { home, env } = isolatedHome();
    const result = await runCli(["dispatch", ...c.args], { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error E_INPUT_INVALID: brief .*\nfix: .+\n$/s);
    expect(result.stderr).toContain(c.mentions);
    expect(dispatchFolders(home)).toEqual([]);
  });
});
