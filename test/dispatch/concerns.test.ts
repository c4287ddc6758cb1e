import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { type Command, parseInput, usageOf } from "../../src/cli/command-io.js";
import { dispatchCommand } from "../../src/cli/dispatch-command.js";
import { argumentName, inputSchemaOf, parsedInputOf } from "../../src/cli/mcp/input.js";
import { TOOLS } from "../../src/cli/mcp/tools.js";
import { validateFollowUp } from "../../src/dispatch/follow-up/follow-up-request.js";
import { AGENT_OPTIONS } from "../../src/dispatch/request/agent.js";
import { readAnswer } from "../../src/dispatch/request/answer-input.js";
import {
  CONCERN_OPTIONS,
  DISPATCH_OPTIONS,
  FROM_THE_TURN,
  flagValues,
} from "../../src/dispatch/request/dispatch-options.js";
import { type RawDispatchInput, validateDispatch } from "../../src/dispatch/request/dispatch-request.js";
import type { OptionDef } from "../../src/domain/option-def.js";
import { ROOT } from "../helpers/folders.js";

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

// The measure of specs/dispatch.md, "A request's concerns": a flag added to a concern touches that
// concern's module, its test and the specs. Where a request is read from the command line or the MCP
// tool, composed for a successor or written to disk, no concern's flag or field is spelled — but what
// each of those places truly owns, listed here with why.

/** Each place, with the names it may spell, each with its reason. */
const COMPOSERS: Record<string, Record<string, string>> = {
  "src/dispatch/queue/hand-over.ts": {
    run: "the next attempt is admitted into the recorded folder's run, which it checks",
    thread: "a repair's: the recorded attempt's own thread",
    repair: "whether the step is a repair (the successor's own), not --repair",
    answer: "answer-schema.json, read from the recorded folder for the answer concern's carry",
    caps: "the run's live caps that admission holds a next attempt to, not the request's",
    account: "the account chosen for the next attempt (account.json), not --account",
    accounts: "the accounts the next attempt asks for, as its staged admit.json says",
    tags: "the tags the next attempt carries, as its staged admit.json says: what budgets by tag judge",
  },
  "src/dispatch/follow-up/follow-up-request.ts": {
    backend: "refused when other than the thread's (§14)",
    name: "refused when other than the conversation's (§14)",
    run: "where the turn is looked up",
    access: "refused when other than the thread's (§14)",
    followUp: "the link to the turn it continues",
    worktree: "the conversation's worktree, worked in again",
  },
  "src/dispatch/admit/stage.ts": {
    account: "the account chosen for it (account.json), which its live marker names",
    accounts: "its live marker's copy of admit.json's, what promotion judges windows by",
    tags: "its live marker's copy of admit.json's, what promotion judges budgets by tag by",
    backend: "its plan makes the CLI's command line",
    name: "the folder's name",
    owns: "what admission judges overlaps by, resolved here",
    env: "spec.json's env: the plan's, under the request's",
    brief: "brief.md, written and named here",
    answer: "answer-schema.json, written and named here",
    answerSchema: "answer-schema.json's path, in spec.json and the plan",
    worktree: "the worktree as placed",
    chain: "the chain link: attempt, failoverFrom, ladder",
    followUp: "the link to the turn it continues",
    sandbox: "spec.json's sandbox: the policy the use case resolved (sandboxPolicy)",
    sandboxPolicy: "the policy the use case resolved from the sandbox concern's flags",
  },
  "src/dispatch/dispatch-flags.ts": {
    run: "the run's name, defaulted from the environment",
    followUp: "chooses the validation: anew, or as a follow-up",
    raceAsked: "a race asked for: its attempts' requests are made from the request (race-request.ts)",
  },
  "src/cli/dispatch-command.ts": {
    backend: "printed",
    run: "printed",
    thread: "printed",
    followUp: "printed",
    worktree: "the worktree as placed, printed",
    base: "the worktree as placed, printed",
    placement: "the job an engine took, printed",
    attempts: "a race's attempts as admitted, printed",
    pick: "the race's pick as race.json holds it, printed",
  },
  "src/cli/mcp/mcp-server.ts": {},
  "src/cli/mcp/tools.ts": {
    fallback: "a tool argument's default, not --fallback",
    answerSchema: "the tool takes the schema inline (specs/mcp.md)",
  },
  "src/cli/mcp/input.ts": { fallback: "a tool argument's default, not --fallback" },
};

/** The fields of a request, as validation composes them, and those the use case sets after it. */
function requestFields(): string[] {
  const raw = {
    ...flagValues({}),
    backend: "claude-code",
    bin: "/bin/true",
    run: "default",
    brief: Buffer.from("b"),
    lockHint: true,
    outcome: true,
    steerable: true,
    rest: [],
    environment: process.env,
  } as RawDispatchInput;
  return [...Object.keys(validateDispatch(raw)), "sandboxPolicy", "followUp"];
}

/** The code of `file` without its comments. */
function codeOf(file: string): string {
  return fs
    .readFileSync(path.join(ROOT, file), "utf8")
    .split("\n")
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
    .map((line) => line.replace(/\s\/\/.*$/, ""))
    .join("\n");
}

/**
 * The names of `names` that `code` spells: as a flag (`"--keep-tmp`), read of a request or of flags
 * (`request.keepTmp`), or — for a name the request's core does not share with every other object
 * (`run`, `backend`) — as a key (`keepTmp:`).
 */
function spelled(code: string, names: readonly string[], core: ReadonlySet<string>): string[] {
  return names.filter((name) => {
    const flag = name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    const read = new RegExp(`\\b(request|raw|asked|flags|values)\\??\\.${name}\\b`);
    const key = new RegExp(`\\b${name}\\??:`);
    return (
      code.includes(`"--${flag}`) ||
      code.includes(`\`--${flag}`) ||
      read.test(code) ||
      (!core.has(name) && key.test(code))
    );
  });
}

describe("the places that compose a request", () => {
  const names = [...new Set([...FLAGS.map(({ flag }) => argumentName(flag)), ...requestFields()])];
  const core = new Set([...Object.keys(AGENT_OPTIONS).map(argumentName), "extraArgs", "brief", "chain"]);

  it.each(Object.keys(COMPOSERS))("spell no concern's flag or field in %s but their own", (file) => {
    const own = COMPOSERS[file] ?? {};
    expect(spelled(codeOf(file), names, core).filter((name) => own[name] === undefined)).toEqual([]);
  });
});
