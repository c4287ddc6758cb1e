import { describe, expect, it } from "vitest";
import { type Command, parseInput, usageOf } from "../../src/cli/command-io.js";
import { dispatchCommand } from "../../src/cli/dispatch-command.js";
import { argumentName, inputSchemaOf, parsedInputOf } from "../../src/cli/mcp/input.js";
import { TOOLS } from "../../src/cli/mcp/tools.js";
import { validateFollowUp } from "../../src/dispatch/follow-up/follow-up-request.js";
import { readAnswer } from "../../src/dispatch/request/answer-input.js";
import {
  CONCERN_OPTIONS,
  DISPATCH_OPTIONS,
  FROM_THE_TURN,
  flagValues,
} from "../../src/dispatch/request/dispatch-options.js";
import { type RawDispatchInput, validateDispatch } from "../../src/dispatch/request/dispatch-request.js";
import type { OptionDef } from "../../src/domain/option-def.js";

// A request's concerns (specs/dispatch.md, "A request's concerns"): each flag is declared once, by the
// concern that validates it, and reaches the command line's parser and help, the MCP tool's schema and
// its concern's validation from there. Every case walks the concerns' tables, so a flag added to a
// concern is covered here with no change to this file, and one that misses a place fails it.

const FLAGS = Object.entries(CONCERN_OPTIONS).flatMap(([concern, options]) =>
  Object.entries(options).map(([flag, def]) => ({ concern, flag, def })),
);

/**
 * The flags read before the concerns validate: by the command, which owns stdin (`--brief-file`), and by
 * the use case (dispatch-flags.ts): `--follow-up` chooses the validation, the answer schema is read first.
 */
const READ_BEFORE = new Map([
  ["brief-file", "the command's readBrief"],
  ["follow-up", "requestFromFlags"],
  ["answer-schema", "readAnswer"],
  ["repair", "readAnswer"],
]);

/** The keys a function reads of `value`. */
function keysRead<T extends object>(value: T, use: (proxy: T) => unknown): Set<string> {
  const read = new Set<string>();
  const proxy = new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key === "string") read.add(key);
      return Reflect.get(target, key, receiver);
    },
  });
  use(proxy);
  return read;
}

function sampleArgv(flag: string, def: OptionDef): string[] {
  if (def.type === "boolean") return [`--${flag}`];
  return [`--${flag}`, def.choices?.[0] ?? "v"];
}

describe("a request's concerns", () => {
  it("declare each flag of catherd dispatch once, in one concern", () => {
    const seen = new Map<string, string>();
    for (const { concern, flag } of FLAGS) {
      expect(seen.get(flag), `--${flag} of ${concern}`).toBeUndefined();
      seen.set(flag, concern);
    }
    expect(Object.keys(dispatchCommand.options)).toEqual([...seen.keys()]);
    expect(Object.keys(DISPATCH_OPTIONS).length).toBeGreaterThan(40);
  });

  it.each(FLAGS)("show --$flag ($concern) in catherd dispatch --help", ({ flag, def }) => {
    const usage = usageOf(dispatchCommand as Command<unknown>);
    expect(usage).toMatch(new RegExp(`^  --${flag}\\b`, "m"));
    expect(usage.replace(/\s+/g, " ")).toContain(def.description.split(" ").slice(0, 4).join(" "));
  });

  it.each(FLAGS)("offer --$flag ($concern) as an argument of the MCP dispatch tool", ({ flag }) => {
    const tool = TOOLS.find((t) => t.name === "dispatch");
    if (tool === undefined) throw new Error("no dispatch tool");
    const properties = inputSchemaOf(tool).properties as Record<string, unknown>;
    // --answer-schema names a file; the tool takes the schema itself, inline (specs/mcp.md).
    const name = flag === "answer-schema" ? "answerSchema" : argumentName(flag);
    expect(properties, `--${flag}`).toHaveProperty(name);
    if (flag !== "answer-schema") {
      const given = parsedInputOf(tool, {
        [name]: tool.command.options[flag]?.type === "boolean" ? true : "x",
      });
      expect(flagValues(given.values)[name], `--${flag}`).not.toBeUndefined();
    }
  });

  it.each(FLAGS)("hand --$flag ($concern) from the command line to its concern", ({ flag, def }) => {
    const parsed = parseInput(dispatchCommand as Command<unknown>, sampleArgv(flag, def));
    const flags = flagValues(parsed.values);
    expect(flags[argumentName(flag)], `--${flag}`).toEqual(
      def.type === "boolean"
        ? true
        : def.multiple === true
          ? [def.choices?.[0] ?? "v"]
          : (def.choices?.[0] ?? "v"),
    );
  });

  it("read every flag in validation, or before it where the brief and the answer are read", () => {
    const raw = {
      ...flagValues({}),
      backend: "exec",
      run: "default",
      brief: null,
      rest: ["true"],
      environment: process.env,
    } as RawDispatchInput;
    const read = keysRead(raw, (proxy) => validateDispatch(proxy));
    const readFirst = keysRead(flagValues({}), (proxy) => readAnswer(proxy));
    for (const { concern, flag } of FLAGS) {
      const key = argumentName(flag);
      const where = READ_BEFORE.get(flag);
      if (where === "readAnswer") expect(readFirst.has(key), `--${flag}`).toBe(true);
      else if (where === undefined) expect(read.has(key), `--${flag} of ${concern}`).toBe(true);
    }
  });

  it.each(Object.keys(FROM_THE_TURN))(
    "refuse --%s with --follow-up, which takes it from the turn",
    (flag) => {
      const def = DISPATCH_OPTIONS[flag];
      if (def === undefined) throw new Error(`--${flag} is no flag of a concern`);
      const parsed = parseInput(dispatchCommand as Command<unknown>, sampleArgv(flag, def));
      const raw = { ...flagValues(parsed.values), run: "default", brief: null, rest: [], environment: {} };
      // Refused before the run is looked at: the home is never read.
      expect(() => validateFollowUp(raw as RawDispatchInput, "talk", "/nonexistent")).toThrow(
        new RegExp(`^--${flag} with --follow-up: a follow-up continues its turn's`),
      );
    },
  );
});
