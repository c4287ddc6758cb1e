import { z } from "zod";
import { checked } from "../../domain/checked.js";
import { CatherdError } from "../../domain/errors.js";
import { argumentName } from "../../domain/option-def.js";
import type { OptionDef, ParsedInput } from "../command-io.js";
import type { ToolSpec } from "./tools.js";

// A tool's arguments are its command's flags (the option table the command line parses), named in
// camelCase, plus the command's positionals and its arguments after `--` as named arguments, plus what
// the tool alone adds. Here they are checked for their JSON types only and turned into the ParsedInput
// the command line would have produced; the values themselves are then checked by the command, as on the
// command line, so a tool and a flag fail with the same E_… code, message and fix.

/** Arguments a client adds to every tool by itself, accepted and ignored (gemini-cli: wait_for_previous). */
const CLIENT_ARGUMENTS = new Set(["wait_for_previous"]);

/** JSON Schema, as MCP's tools/list carries it. */
export type JsonSchema = { [key: string]: unknown };

/** One argument of a tool: how it is advertised, how its JSON type is checked, and where it goes. */
interface Argument {
  name: string;
  schema: JsonSchema;
  check: z.ZodTypeAny;
  apply(value: unknown, input: ParsedInput): void;
  required: boolean;
  /** Applied when the argument is not given. */
  fallback?: unknown;
}

export { argumentName };

/** Text as a flag carries it: a number a model sent for a numeric flag is written as the CLI would read it. */
const text = z.union([z.string(), z.number().finite()]).transform(String);
const texts = z.union([z.array(text), text.transform((t) => [t])]);

function flagArgument(flag: string, def: OptionDef): Argument {
  const listed = def.multiple === true || def.list === "comma";
  const schema: JsonSchema =
    def.type === "boolean"
      ? { type: "boolean" }
      : listed
        ? { type: "array", items: { type: "string" } }
        : def.integer === true
          ? { type: "integer" }
          : { type: "string", ...(def.choices === undefined ? {} : { enum: [...def.choices] }) };
  const said = def.toolDescription ?? def.description;
  return {
    name: argumentName(flag),
    schema: {
      ...schema,
      description: def.default === undefined ? said : `${said} (default: ${def.default})`,
    },
    check: def.type === "boolean" ? z.boolean() : listed ? texts : text,
    apply(value, input) {
      // A comma-separated flag takes a list as the command line would have it written.
      input.values[flag] =
        def.list === "comma" && Array.isArray(value)
          ? value.join(",")
          : (value as string | boolean | string[]);
    },
    required: def.required === true,
  };
}

/** Every argument of a tool, in the order they are advertised. */
function argumentsOf(spec: ToolSpec): Argument[] {
  const args: Argument[] = [];
  const positional = spec.positionals;
  if (positional !== undefined) {
    args.push({
      name: positional.name,
      schema:
        positional.multiple === true
          ? { type: "array", items: { type: "string" }, description: positional.description }
          : { type: "string", description: positional.description },
      check: positional.multiple === true ? texts : text,
      apply(value, input) {
        input.positionals = Array.isArray(value) ? (value as string[]) : [value as string];
      },
      required: positional.required === true,
    });
  }
  for (const [flag, def] of Object.entries(spec.command.options)) {
    if (!spec.omit?.includes(flag)) args.push(flagArgument(flag, def));
  }
  if (spec.rest !== undefined) {
    args.push({
      name: spec.rest.name,
      schema: { type: "array", items: { type: "string" }, description: spec.rest.description },
      check: z.array(text),
      apply(value, input) {
        input.rest = value as string[];
      },
      required: false,
    });
  }
  for (const [name, extra] of Object.entries(spec.extra ?? {})) {
    args.push({ name, ...extra, required: false });
  }
  return args;
}

/** The tool's input schema for tools/list. */
export function inputSchemaOf(spec: ToolSpec): JsonSchema {
  const args = argumentsOf(spec);
  const required = args.filter((a) => a.required).map((a) => a.name);
  return {
    type: "object",
    properties: Object.fromEntries(args.map((a) => [a.name, a.schema])),
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/**
 * The ParsedInput a tool call stands for, with `--json`. Throws E_INPUT_INVALID naming the argument for
 * an unknown argument, a missing required one, or a value of the wrong JSON type.
 */
export function parsedInputOf(spec: ToolSpec, raw: unknown): ParsedInput {
  if (raw !== undefined && (typeof raw !== "object" || raw === null || Array.isArray(raw))) {
    throw new CatherdError("E_INPUT_INVALID", `the arguments of ${spec.name} must be an object`, {
      fix: `give an object with: ${argumentsOf(spec)
        .map((a) => a.name)
        .join(", ")}`,
    });
  }
  const given = (raw ?? {}) as Record<string, unknown>;
  const args = argumentsOf(spec);
  const input: ParsedInput = { values: {}, positionals: [], rest: [], json: true };
  for (const name of Object.keys(given)) {
    if (!CLIENT_ARGUMENTS.has(name) && !args.some((a) => a.name === name)) {
      throw new CatherdError("E_INPUT_INVALID", `${spec.name} has no argument ${JSON.stringify(name)}`, {
        fix: `use only: ${args.map((a) => a.name).join(", ")}`,
      });
    }
  }
  for (const arg of args) {
    const value = given[arg.name];
    if (value === undefined || value === null) {
      if (arg.fallback !== undefined) arg.apply(arg.fallback, input);
      if (arg.required) {
        throw new CatherdError("E_INPUT_INVALID", `${spec.name} needs ${arg.name}`, {
          fix: `give ${arg.name}: ${String(arg.schema.description ?? "")}`,
        });
      }
      continue;
    }
    const parsed = checked(
      arg.check,
      value,
      () =>
        new CatherdError(
          "E_INPUT_INVALID",
          `${spec.name} argument ${arg.name} must be ${describeType(arg.schema)}, not ${JSON.stringify(value).slice(0, 80)}`,
          { fix: `give ${arg.name} as ${describeType(arg.schema)}` },
        ),
    );
    arg.apply(parsed, input);
  }
  return input;
}

function describeType(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.join(", ")}`;
  if (schema.type === "array") return "a list of strings";
  if (schema.type === "integer") {
    const range =
      typeof schema.minimum === "number" && typeof schema.maximum === "number"
        ? ` from ${schema.minimum} to ${schema.maximum}`
        : "";
    return `a whole number${range}`;
  }
  return `a ${String(schema.type)}`;
}

/**
 * An error's words as an MCP client should read them: the command line's flags become the tools'
 * arguments (`--max-parallel` → `maxParallel`, `--all` → `all`) and `catherd <verb>` the tool of that name,
 * for an agent that has no shell.
 */
export function inToolTerms(text: string): string {
  return text
    .replace(/--([a-z][a-z-]*[a-z])/g, (_whole, flag: string) => argumentName(flag))
    .replace(/\bcatherd (dispatch|wait|result|status|show|logs|cancel|doctor)\b/g, "the $1 tool");
}
