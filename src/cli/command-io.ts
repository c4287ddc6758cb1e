import { parseArgs } from "node:util";
import type { StandbyReserve } from "../dispatch/start/standby-reserve.js";
import { CatherdError } from "../domain/errors.js";
import type { OptionDef, OptionSpec } from "../domain/option-def.js";
import { reportError } from "../infra/report-error.js";
import { jsonText } from "./json-text.js";

// The one place that turns a command's data or error into output and an exit code (specs/cli.md, "Output
// and errors"), and a command's option table into its usage text.

export type { OptionDef, OptionSpec } from "../domain/option-def.js";

/** `--run`, as every command that reads a run takes it. */
export const RUN_OPTION: OptionDef = {
  type: "string",
  value: "<r>",
  description: "the run to look in",
  default: "$CATHERD_RUN, else default",
};

/** A command: parses its own flags, its handler does one thing and returns data; `text` renders it for people. */
export interface Command<T> {
  name: string;
  /** What follows `catherd <name>` in the usage line, before the flags: its positionals (`<name|id|dir>`). */
  synopsis: string;
  /**
   * How many arguments it takes before `--`: more are refused (E_INPUT_INVALID) before the handler runs,
   * never ignored. "own" leaves the check to the handler, whose refusal says where the words belong.
   */
  positionals: 0 | 1 | "many" | "own";
  /** What the command does, for `--help`: a paragraph. */
  summary: string;
  /** What `--json` prints, in a few words (`{dispatched: {…}}`); by default the result as JSON. */
  json?: string;
  options: OptionSpec;
  handler(input: ParsedInput, context: CommandContext): Promise<CommandResult<T>>;
}

/** What main prepared for a command before loading it. */
export interface CommandContext {
  /**
   * For a verb that starts a supervisor (the verb table says so): the caller's standby reserve — the
   * command line's holds one started as the process's first act, loading itself while the command loads
   * and admits; `catherd mcp`'s lives between calls. Undefined: the use case makes one of its own.
   */
  standbys?: StandbyReserve;
  /** Whether stdin is the command's to read (a brief); false under `catherd mcp`, whose stdin is the protocol. */
  stdinIsOurs: boolean;
}

export interface ParsedInput {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  /** Arguments after a bare `--`. */
  rest: string[];
  json: boolean;
}

export interface CommandResult<T> {
  data: T;
  text: string;
  exitCode?: number;
  /** Nothing to print: the command's output was another program's (`lock` runs one in the foreground). */
  silent?: boolean;
}

/** Parses argv strictly: an unknown flag or a missing value is E_INPUT_INVALID (exit 2). */
export function parseInput(command: Command<unknown>, argv: readonly string[]): ParsedInput {
  const cut = argv.indexOf("--");
  const own = cut === -1 ? [...argv] : argv.slice(0, cut);
  const rest = cut === -1 ? [] : argv.slice(cut + 1);
  const options = {
    ...parserOptions(command.options),
    json: { type: "boolean" as const },
    help: { type: "boolean" as const, short: "h" },
  };
  try {
    const { values, positionals } = parseArgs({ args: own, options, allowPositionals: true, strict: true });
    if (values.help !== true) refuseExtraArguments(command, positionals);
    return { values: values as ParsedInput["values"], positionals, rest, json: values.json === true };
  } catch (error) {
    if (error instanceof CatherdError) throw error;
    throw (
      flagProblem(command.name, options, own) ??
      new CatherdError("E_INPUT_INVALID", (error as Error).message, {
        fix: `catherd ${command.name} --help`,
        cause: error,
      })
    );
  }
}

/** More arguments than the command takes: the first one too many, named. */
function refuseExtraArguments(command: Command<unknown>, positionals: readonly string[]): void {
  const most = command.positionals;
  if (most === "many" || most === "own" || positionals.length <= most) return;
  const extra = positionals[most] as string;
  const takes = most === 0 ? "takes no arguments" : `takes one: ${command.synopsis.trim()}`;
  throw new CatherdError("E_INPUT_INVALID", `unexpected argument ${JSON.stringify(extra)}`, {
    fix: `catherd ${command.name} ${takes} (catherd ${command.name} --help)`,
  });
}

/**
 * What is wrong with the flags node's parser refused, in catherd's words: an unknown flag, a flag given
 * no value, a value that starts with `-` (node takes it for a flag: it must be joined with `=`), a value
 * given to a flag that takes none. Null when none of these is found (then node's words stand).
 */
function flagProblem(
  verb: string,
  options: Record<string, { type: "string" | "boolean"; short?: string }>,
  own: readonly string[],
): CatherdError | null {
  const help = `catherd ${verb} --help`;
  const byShort = new Map(
    Object.entries(options).flatMap(([name, o]) => (o.short === undefined ? [] : [[o.short, name]])),
  );
  for (let i = 0; i < own.length; i++) {
    const arg = own[i] as string;
    if (!arg.startsWith("-") || arg === "-") continue;
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--")
      ? arg.slice(2, eq === -1 ? undefined : eq)
      : byShort.get(arg.slice(1, 2));
    const option = flag === undefined ? undefined : options[flag];
    if (option === undefined) {
      return new CatherdError(
        "E_INPUT_INVALID",
        `unknown option ${arg.slice(0, eq === -1 ? undefined : eq)}`,
        {
          fix: `${help} lists the options; an argument for the command itself goes after --, as in: catherd ${verb} … -- ${arg}`,
        },
      );
    }
    if (option.type === "boolean") {
      if (eq !== -1)
        return new CatherdError("E_INPUT_INVALID", `--${flag} takes no value`, {
          fix: `give --${flag} alone`,
        });
      continue;
    }
    if (eq !== -1) continue;
    const value = own[i + 1];
    if (value === undefined) {
      return new CatherdError("E_INPUT_INVALID", `--${flag} needs a value`, {
        fix: `give --${flag} <value> (${help})`,
      });
    }
    if (value.startsWith("-")) {
      return new CatherdError(
        "E_INPUT_INVALID",
        `--${flag} ${value}: a value that starts with - is taken for an option`,
        {
          fix: `join it to the flag: --${flag}=${value}`,
        },
      );
    }
    i += 1;
  }
  return null;
}

/** What node's parseArgs reads of an option table. */
function parserOptions(options: OptionSpec): Record<string, Pick<OptionDef, "type" | "multiple" | "short">> {
  return Object.fromEntries(
    Object.entries(options).map(([name, { type, multiple, short }]) => [
      name,
      { type, ...(multiple === undefined ? {} : { multiple }), ...(short === undefined ? {} : { short }) },
    ]),
  );
}

/** Runs a command end to end and returns the process exit code. */
export async function executeCommand(
  command: Command<unknown>,
  argv: readonly string[],
  context: CommandContext = { stdinIsOurs: true },
): Promise<number> {
  const wantsJson = argv.includes("--json");
  try {
    const input = parseInput(command, argv);
    if (input.values.help === true) {
      process.stdout.write(`${usageOf(command)}\n`);
      return 0;
    }
    const result = await command.handler(input, context);
    if (result.silent === true) return result.exitCode ?? 0;
    process.stdout.write(
      input.json
        ? `${jsonText(result.data)}\n`
        : result.text.endsWith("\n") || result.text === ""
          ? result.text
          : `${result.text}\n`,
    );
    return result.exitCode ?? 0;
  } catch (error) {
    return reportError(error, wantsJson);
  }
}

/** A string flag's value, or undefined. */
export function stringOption(input: ParsedInput, name: string): string | undefined {
  const value = input.values[name];
  return typeof value === "string" ? value : undefined;
}

export function listOption(input: ParsedInput, name: string): string[] {
  const value = input.values[name];
  return Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
}

/** The column the flags' descriptions start in, and the width they are wrapped to. */
const FLAG_COLUMN = 26;
const HELP_WIDTH = 100;

/**
 * A command's `--help`, generated from its option table, so that a flag is described once: the usage
 * line, the summary, then each flag with the form of its value, what it does and its default.
 */
export function usageOf(command: Command<unknown>): string {
  const flags = Object.entries(command.options).map(([name, def]) => {
    const head = `  --${name}${def.type === "string" ? ` ${def.value ?? "<value>"}` : ""}`;
    const choices = def.choices === undefined ? "" : ` (${def.choices.join(", ")})`;
    const fallback = def.default === undefined ? "" : ` (default: ${def.default})`;
    const repeat = def.multiple === true ? " (repeatable)" : "";
    const required = def.required === true ? " (required)" : "";
    return helpEntry(head, `${def.description}${required}${choices}${repeat}${fallback}`);
  });
  flags.push(
    helpEntry("  --json", command.json === undefined ? "print the result as JSON" : `print ${command.json}`),
  );
  // "[options]" after the synopsis, unless the synopsis places it (before a command given after --).
  const synopsis = command.synopsis.includes("[options]")
    ? command.synopsis
    : `${command.synopsis} [options]`;
  const line = ["usage: catherd", command.name, synopsis.trim()].join(" ");
  return [line, "", wrap(command.summary, HELP_WIDTH).join("\n"), "", "options:", ...flags].join("\n");
}

/**
 * One entry of a help text (a flag with its value, a verb with its synopsis), then its description from
 * `column` on, wrapped: on the same line when at least two spaces part them, else on the next.
 */
export function helpEntry(head: string, description: string, column = FLAG_COLUMN): string {
  const lines = wrap(description, HELP_WIDTH - column);
  const indent = " ".repeat(column);
  const first =
    head.length < column - 1
      ? `${head.padEnd(column)}${lines[0] ?? ""}`
      : `${head}\n${indent}${lines[0] ?? ""}`;
  return [first, ...lines.slice(1).map((l) => `${indent}${l}`)].join("\n");
}

/** Words wrapped to `width` columns; paragraphs (blank lines) kept. */
function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    if (out.length > 0) out.push("");
    let line = "";
    for (const word of paragraph.split(/\s+/).filter((w) => w !== "")) {
      if (line !== "" && line.length + 1 + word.length > width) {
        out.push(line);
        line = word;
      } else line = line === "" ? word : `${line} ${word}`;
    }
    if (line !== "") out.push(line);
  }
  return out;
}
