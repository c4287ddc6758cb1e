import { describe, expect, it } from "vitest";
import { type OptionDef, parseInput } from "../../src/cli/command-io.js";
import { dispatchCommand } from "../../src/cli/dispatch-command.js";
import { argumentName, inputSchemaOf, parsedInputOf } from "../../src/cli/mcp/input.js";
import { TOOLS, type ToolSpec } from "../../src/cli/mcp/tools.js";

// A tool's arguments are its command's option table: every flag, given to the tool, must reach the
// command exactly as the command line would have parsed it. A flag added to a command (issue 12 adds
// --queue, --fallback, --max-parallel-backend to dispatch) is covered here without a change to this file;
// a flag that does not reach the tool fails it.

/** The flags a tool leaves out, each because it blocks past any client's tool-call ceiling (specs/mcp.md). */
const LEFT_OUT: Record<string, string[]> = {
  logs: ["follow"],
  cancel: ["wait"],
  wait: ["timeout"],
  // The tool takes the schema inline (`answerSchema`, an object), and returns the record, which holds the answer.
  dispatch: ["answer-schema"],
  result: ["answer"],
  // The message is inline (`text`): a client has no file on the server's machine; `wait` would block past
  // a client's tool-call ceiling (show tells where a message stands).
  send: ["file", "wait"],
};

/** A value of the flag's kind, as the tool takes it and as the command line writes it. */
function sample(def: OptionDef): { tool: unknown; argv: string[] } {
  if (def.type === "boolean") return { tool: true, argv: [] };
  if (def.multiple === true) return { tool: ["A=1", "B=2"], argv: ["A=1", "B=2"] };
  if (def.integer === true) return { tool: 3, argv: ["3"] };
  const value = def.choices?.[0] ?? "some-value";
  return { tool: value, argv: [value] };
}

function toolOf(name: string): ToolSpec {
  const tool = TOOLS.find((t) => t.name === name);
  if (tool === undefined) throw new Error(`no tool ${name}`);
  return tool;
}

describe("tool arguments from the commands' flags", () => {
  it("offers every flag of catherd dispatch as an argument of the dispatch tool", () => {
    const properties = inputSchemaOf(toolOf("dispatch")).properties as Record<string, unknown>;
    const flags = Object.keys(dispatchCommand.options);
    expect(flags.length).toBeGreaterThan(10);
    for (const flag of flags) expect(properties, `--${flag}`).toHaveProperty(argumentName(flag));
    // --answer-schema is a file on the command line; the tool's `answerSchema` is the schema itself.
    expect(toolOf("dispatch").omit ?? []).toEqual(["answer-schema"]);
    expect(properties.answerSchema).toMatchObject({ type: "object" });
  });

  for (const tool of TOOLS) {
    it(`hands ${tool.name}'s command each of its flags as the command line parses it`, () => {
      const left = LEFT_OUT[tool.name] ?? [];
      expect(tool.omit ?? []).toEqual(left);
      // A required positional (the dispatch's name) is given alongside, as on the command line.
      const positional = tool.positionals?.required === true ? tool.positionals.name : null;
      const base: Record<string, unknown> = positional === null ? {} : { [positional]: "worker" };
      const baseArgv = positional === null ? [] : ["worker"];
      // So is a required flag (dispatch's backend).
      for (const [flag, def] of Object.entries(tool.command.options)) {
        if (def.required !== true) continue;
        const { tool: value, argv } = sample(def);
        base[argumentName(flag)] = value;
        baseArgv.push(`--${flag}`, ...argv);
      }
      for (const [flag, def] of Object.entries(tool.command.options)) {
        if (left.includes(flag)) continue;
        const { tool: value, argv } = sample(def);
        const viaTool = parsedInputOf(tool, { ...base, [argumentName(flag)]: value });
        const repeated =
          def.multiple === true ? argv.flatMap((v) => [`--${flag}`, v]) : [`--${flag}`, ...argv];
        const viaCli = parseInput(tool.command, [...baseArgv, ...repeated, "--json"]);
        expect(viaTool.values[flag], `${tool.name} --${flag}`).toEqual(viaCli.values[flag]);
        expect(viaTool.positionals, `${tool.name} --${flag}`).toEqual(viaCli.positionals);
      }
    });
  }

  it("refuses an argument no flag stands for, and a value of the wrong JSON type, naming it", () => {
    const dispatch = toolOf("dispatch");
    expect(() => parsedInputOf(dispatch, { backend: "exec", queue2: true })).toThrow(/no argument "queue2"/);
    expect(() => parsedInputOf(dispatch, { backend: "exec", maxParallel: true })).toThrow(/maxParallel/);
    expect(() => parsedInputOf(dispatch, { backend: "exec", env: [{}] })).toThrow(/env/);
  });
});
