import { describe, expect, it } from "vitest";
import { inputSchemaOf } from "../../src/cli/mcp/input.js";
import { TOOLS } from "../../src/cli/mcp/tools.js";
import { type RawDispatchInput, validateDispatch } from "../../src/dispatch/request/dispatch-request.js";
import { racePlan } from "../../src/dispatch/request/race-request.js";
import { isCatherdError } from "../../src/domain/errors.js";
import { dispatchFolders, isolatedHome, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/folders.js";

// A race's flags (specs/dispatch.md, "A race"), checked before anything is written: the rules as a table
// through validateDispatch in process, the attempts' requests as racePlan makes them, and one refusal
// through the real command line that writes nothing.

/** `catherd dispatch --backend codex --worktree --verify true --brief fix`, as validation gets it. */
const RACE: RawDispatchInput = {
  backend: "codex",
  bin: "/bin/true",
  run: "default",
  env: [],
  brief: Buffer.from("fix it"),
  rest: [],
  worktree: true,
  environment: { ...process.env, CATHERD_GEMINI_BIN: "/bin/true", CATHERD_CLAUDE_BIN: "/bin/true" },
  ...({ verify: "true" } as object),
};

const refusals: [string, Partial<RawDispatchInput> & Record<string, unknown>, string][] = [
  ["--attempts 0", { attempts: "0" }, "--attempts"],
  ["--attempts 9", { attempts: "9" }, "from 1 to 8"],
  ["--attempts of a huge number", { attempts: "9".repeat(400) }, "--attempts"],
  ["--attempts 1 alone", { attempts: "1" }, "a race has 2 to 8"],
  ["eight attempts and an --also", { attempts: "8", also: ["gemini"] }, "make 9 attempts"],
  ["--also exec", { attempts: "1", also: ["exec"] }, "not an agent's CLI"],
  ["--also of an unknown CLI", { also: ["cursor"] }, "not an agent's CLI"],
  ["--also with a model of two lines", { also: ["gemini:a\nb"] }, "one line"],
  ["--pick of no pick", { attempts: "2", pick: "best" }, "--pick"],
  ["--pick without a race", { pick: "all" }, "needs a race"],
  ["a race without --verify", { attempts: "2", verify: undefined }, "needs --verify"],
  ["a race without --worktree", { attempts: "2", worktree: false }, "needs --worktree"],
  ["a race of exec", { backend: "exec", bin: undefined, rest: ["true"], attempts: "2" }, "a race"],
  ["a race on a thread", { attempts: "2", thread: "01a2264d-a96b-7c23-b4e9-0484292c91b3" }, "--thread"],
  ["a name too long for its attempts", { attempts: "8", name: "n".repeat(63) }, "at most 62"],
];

describe("a race's flags", () => {
  it.each(refusals)("refuses %s with E_INPUT_INVALID and a fix", (_title, change, words) => {
    let caught: unknown;
    try {
      validateDispatch({ ...RACE, ...change } as RawDispatchInput);
    } catch (error) {
      caught = error;
    }
    expect(isCatherdError(caught) && caught.code).toBe("E_INPUT_INVALID");
    expect(isCatherdError(caught) && caught.message).toContain(words);
    expect(isCatherdError(caught) && caught.fix).toBeTruthy();
  });

  it("makes one attempt per --attempts on its own CLI and one per --also, each named under the race", () => {
    const raw = { ...RACE, name: "fix", attempts: "2", also: ["gemini", "claude-code:claude-sonnet-4-5"] };
    const request = validateDispatch(raw as RawDispatchInput);
    expect(request.raceAsked).toEqual({
      same: 2,
      also: [
        { backend: "gemini", model: null },
        { backend: "claude-code", model: "claude-sonnet-4-5" },
      ],
      pick: "first-pass",
    });
    const asked = request.raceAsked as NonNullable<typeof request.raceAsked>;
    const plan = racePlan(
      raw as RawDispatchInput,
      { ...request, raceAsked: asked },
      "20261206T224100Z-k3x9qa",
    );
    expect(plan).toMatchObject({ name: "fix", pick: "first-pass", raceId: "20261206T224100Z-k3x9qa" });
    expect(plan.attempts.map((a) => [a.name, a.backend.id, a.model, a.bin, a.race?.attempt])).toEqual([
      ["fix.1", "codex", null, "/bin/true", 1],
      ["fix.2", "codex", null, "/bin/true", 2],
      ["fix.3", "gemini", null, "/bin/true", 3],
      ["fix.4", "claude-code", "claude-sonnet-4-5", "/bin/true", 4],
    ]);
    expect(plan.attempts.every((a) => a.raceAsked === null && a.race?.raceId === plan.raceId)).toBe(true);
  });

  it("names a race without --name after its id", () => {
    const raw = { ...RACE, also: ["gemini"] };
    const request = validateDispatch(raw as RawDispatchInput);
    const asked = request.raceAsked as NonNullable<typeof request.raceAsked>;
    const plan = racePlan(
      raw as RawDispatchInput,
      { ...request, raceAsked: asked },
      "20261206T224100Z-k3x9qa",
    );
    expect(plan.name).toBe("race-k3x9qa");
    expect(plan.attempts.map((a) => a.name)).toEqual(["race-k3x9qa.1", "race-k3x9qa.2"]);
  });

  it("reaches the MCP dispatch tool: attempts a whole number, also a list, pick one of three", () => {
    const tool = TOOLS.find((t) => t.name === "dispatch");
    const schema = inputSchemaOf(tool as NonNullable<typeof tool>) as {
      properties: Record<string, { type?: string; enum?: string[] }>;
    };
    expect(schema.properties.attempts?.type).toBe("integer");
    expect(schema.properties.also?.type).toBe("array");
    expect(schema.properties.pick?.enum).toEqual(["first-pass", "cheapest-pass", "all"]);
  });

  it("refuses a race through the command line with one error and a fix, and writes nothing", async () => {
    const { home, env } = isolatedHome();
    const result = await runCli(
      [
        "dispatch",
        "--backend",
        "codex",
        "--bin",
        "/bin/true",
        "--worktree",
        "--attempts",
        "3",
        "--brief",
        "x",
      ],
      { env, cwd: tempDir() },
    );
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/error E_INPUT_INVALID: .*needs --verify/);
    expect(result.stderr).toContain("fix:");
    expect(dispatchFolders(home)).toEqual([]);
  });
});
