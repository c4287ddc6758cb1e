// The bridge's command line, as the plan of a steerable opencode dispatch writes it
// (src/backends/opencode-steer.ts): `<opencode> [--session ID] [--model P/M] [--variant V]
// [--permission JSON] [--asks] [-- <arguments of opencode serve>…]`.

export interface BridgeArgs {
  /** The opencode executable. */
  bin: string;
  /** A follow-up's session; null: a new one. */
  session: string | null;
  /** The model of every prompt, `provider/model`; null: opencode's configured one. */
  model: { providerID: string; modelID: string } | null;
  variant: string | null;
  /** OPENCODE_PERMISSION for the server (JSON); null: opencode's own configuration. */
  permission: string | null;
  /** Whether asks go to catherd (--on-question); without, the bridge rejects each as `opencode run` does. */
  asks: boolean;
  /** Arguments of `opencode serve` after the bridge's own. */
  serveArgs: string[];
}

const VALUED = new Set(["--session", "--model", "--variant", "--permission"]);

/** The bridge's arguments; throws a TypeError naming what is wrong (a plan of catherd's never is). */
export function parseBridgeArgs(argv: readonly string[]): BridgeArgs {
  const [bin, ...rest] = argv;
  if (bin === undefined || bin.length === 0) throw new TypeError("the opencode executable is missing");
  const values = new Map<string, string>();
  let asks = false;
  let i = 0;
  for (; i < rest.length && rest[i] !== "--"; i++) {
    const flag = rest[i] as string;
    if (flag === "--asks") asks = true;
    else if (VALUED.has(flag) && rest[i + 1] !== undefined) values.set(flag, rest[++i] as string);
    else throw new TypeError(`unknown argument ${JSON.stringify(flag)}`);
  }
  return {
    bin,
    session: values.get("--session") ?? null,
    model: modelOf(values.get("--model") ?? null),
    variant: values.get("--variant") ?? null,
    permission: values.get("--permission") ?? null,
    asks,
    serveArgs: rest.slice(i + 1),
  };
}

function modelOf(named: string | null): BridgeArgs["model"] {
  if (named === null) return null;
  const slash = named.indexOf("/");
  if (slash <= 0) throw new TypeError(`--model ${JSON.stringify(named)} is not provider/model`);
  return { providerID: named.slice(0, slash), modelID: named.slice(slash + 1) };
}
