// A flag as a command declares it: the one table the command line parses, `--help` describes and the MCP
// tool advertises (src/cli/command-io.ts, src/cli/mcp/input.ts). It lives here, below the rooms, so that a
// room below the CLI can own its flags (a dispatch request's concerns, src/dispatch/request/).

/**
 * One flag of a command: how the command line parses it and what it means. The same table gives the
 * command's MCP tool its input schema (src/cli/mcp/input.ts), so a flag added here reaches both.
 */
export interface OptionDef {
  type: "string" | "boolean";
  multiple?: boolean;
  short?: string;
  /** What the flag does, in one line. */
  description: string;
  /** The form of its value in the usage text (`<d>`, `<backend>=<n>`); `<value>` when not given. */
  value?: string;
  /** What applies when the flag is not given, in words (`10m`, `$CATHERD_RUN, else default`). */
  default?: string;
  /** The command refuses to run without it (an MCP client sees it among the tool's `required`). */
  required?: true;
  /** Its value is a comma-separated list (`a/,b.ts`): an MCP client may give it as an array too. */
  list?: "comma";
  /** What the flag does for an MCP client, when the command line's words would mislead it. */
  toolDescription?: string;
  /** The values it takes when they are a closed set (an enum for MCP clients; the command checks them). */
  choices?: readonly string[];
  /** A whole number written as text (an integer for MCP clients; the command checks it). */
  integer?: boolean;
}

export type OptionSpec = Record<string, OptionDef>;

/** A flag's name as a JSON key, an MCP argument and a request's field: `max-parallel` → `maxParallel`. */
export function argumentName(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}
