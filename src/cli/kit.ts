import { parseArgs } from "node:util";
import type { StandbySupervisor } from "../dispatch/standby.js";
import { CatherdError } from "../domain/errors.js";
import { reportError } from "../infra/report-error.js";

// The one place that turns a command's data or error into output and an exit code (design.md §6).

/**
 * One flag of a command: how the command line parses it and what it means. The same table gives the
 * command's MCP tool its input schema (src/cli/mcp/input.ts), so a flag added here reaches both.
 */
export interface OptionDef {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
  /** What the flag does and the form of its value, in one line. */
  description: string;
  /** The values it takes when they are a closed set (an enum for MCP clients; the command checks them). */
  choices?: readonly string[];
  /** A whole number written as text (an integer for MCP clients; the command checks it). */
  integer?: boolean;
}

export type OptionSpec = Record<string, OptionDef>;

/** A command: parses its own flags, its handler does one thing and returns data; `text` renders it for people. */
export interface Command<T> {
  name: string;
  usage: string;
  options: OptionSpec;
  handler(input: ParsedInput, context: CommandContext): Promise<CommandResult<T>>;
}

/** What main prepared for a command before loading it. */
export interface CommandContext {
  /** For `dispatch`: a supervisor started early, loading itself while the dispatcher admits. */
  standby: StandbySupervisor | null;
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
  try {
    const { values, positionals } = parseArgs({
      args: own,
      options: {
        ...parserOptions(command.options),
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
      strict: true,
    });
    return { values: values as ParsedInput["values"], positionals, rest, json: values.json === true };
  } catch (error) {
    throw new CatherdError("E_INPUT_INVALID", (error as Error).message, {
      fix: `catherd ${command.name} --help`,
    });
  }
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
  context: CommandContext = { standby: null, stdinIsOurs: true },
): Promise<number> {
  const wantsJson = argv.includes("--json");
  try {
    const input = parseInput(command, argv);
    if (input.values.help === true) {
      process.stdout.write(`${command.usage}\n`);
      return 0;
    }
    const result = await command.handler(input, context);
    if (result.silent === true) return result.exitCode ?? 0;
    process.stdout.write(
      input.json
        ? `${JSON.stringify(result.data)}\n`
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
