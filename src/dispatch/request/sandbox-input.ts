import * as fs from "node:fs";
import * as path from "node:path";
import { CatherdError } from "../../domain/errors.js";
import {
  isWithin,
  type NetRule,
  netRuleText,
  PROVIDER_ENDPOINTS,
  parseNetRule,
  SANDBOX_MODES,
  type SandboxedMode,
  type SandboxMode,
  type SandboxPolicy,
  sandboxedWorkplace,
  uniqueRules,
} from "../../domain/sandbox/sandbox.js";
import type { AccessLevel, BackendId } from "../../domain/vocab.js";
import type { Concern } from "./concern.js";

// The sandbox a request asks for (specs/sandbox.md): `--sandbox`, else the run's (`--run-sandbox`,
// run.json), else `$CATHERD_SANDBOX`, else off; and what it widens or narrows. Validated before anything is
// written; resolved against run.json by the dispatch use case, before admission.

/** The sandbox flags of a request, validated. */
export interface SandboxRequest {
  /** `--sandbox`; null: the run's, else $CATHERD_SANDBOX, else off. */
  mode: SandboxMode | null;
  /** `--run-sandbox`: remembered in run.json with this dispatch's `--allow-net`; `none` forgets it. */
  runMode: SandboxMode | "none" | null;
  fromEnvironment: SandboxMode | null;
  allowWrite: string[];
  denyRead: string[];
  allowNet: NetRule[];
}

/** run.json's `sandbox`: the run's sandbox and the hosts every dispatch of it may reach. */
export interface RunSandbox {
  mode: SandboxMode;
  allowNet: NetRule[];
}

const MAX_PATHS = 64;
const MAX_RULES = 64;

function invalid(message: string, fix: string): CatherdError {
  return new CatherdError("E_INPUT_INVALID", message, { fix });
}

function mode(field: string, value: string, withNone: boolean): SandboxMode | "none" {
  const values: readonly string[] = withNone ? [...SANDBOX_MODES, "none"] : SANDBOX_MODES;
  if (values.includes(value)) return value as SandboxMode | "none";
  throw invalid(
    `${field} ${JSON.stringify(value.slice(0, 80))} is not a sandbox mode`,
    `give ${field} ${values.join(" | ")}`,
  );
}

/** `--allow-write` / `--deny-read`: absolute in `cwd`, one line each; an allowed one must exist. */
function paths(field: string, values: readonly string[], cwd: string, mustExist: boolean): string[] {
  if (values.length > MAX_PATHS)
    throw invalid(`${field} is given ${values.length} times`, `give at most ${MAX_PATHS}`);
  return [
    ...new Set(
      values.map((value) => {
        if (value === "" || /[\0\n\r]/.test(value)) {
          throw invalid(`${field} ${JSON.stringify(value.slice(0, 80))} is not a path`, `give ${field} PATH`);
        }
        const absolute = path.resolve(cwd, value);
        if (absolute === "/")
          throw invalid(`${field} / would be everything`, `give ${field} a folder or a file`);
        if (mustExist && !fs.existsSync(absolute)) {
          throw invalid(
            `${field} ${absolute} does not exist`,
            `create it first, or leave ${field} ${value} out`,
          );
        }
        return absolute;
      }),
    ),
  ];
}

export function parseSandbox(raw: {
  sandbox?: string | undefined;
  runSandbox?: string | undefined;
  allowWrite?: readonly string[] | undefined;
  denyRead?: readonly string[] | undefined;
  allowNet?: readonly string[] | undefined;
  cwd: string;
  environment: NodeJS.ProcessEnv;
}): SandboxRequest {
  const env = raw.environment.CATHERD_SANDBOX;
  const rules = (raw.allowNet ?? []).flatMap((v) => v.split(",")).filter((v) => v.trim() !== "");
  if (rules.length > MAX_RULES)
    throw invalid(`--allow-net names ${rules.length} hosts`, `give at most ${MAX_RULES}`);
  return {
    mode: raw.sandbox === undefined ? null : (mode("--sandbox", raw.sandbox, false) as SandboxMode),
    runMode: raw.runSandbox === undefined ? null : mode("--run-sandbox", raw.runSandbox, true),
    fromEnvironment:
      env === undefined || env === "" ? null : (mode("CATHERD_SANDBOX", env, false) as SandboxMode),
    allowWrite: paths("--allow-write", raw.allowWrite ?? [], raw.cwd, true),
    denyRead: paths("--deny-read", raw.denyRead ?? [], raw.cwd, false),
    allowNet: uniqueRules(
      rules.map((text) => {
        const rule = parseNetRule(text);
        if (typeof rule === "string") {
          throw invalid(
            `--allow-net ${JSON.stringify(text.slice(0, 80))}: ${rule}`,
            "give --allow-net HOST[:PORT], e.g. registry.npmjs.org:443 or 127.0.0.1:4873",
          );
        }
        return rule;
      }),
    ),
  };
}

/**
 * The sandbox a dispatch gets: `--sandbox`, else `--run-sandbox` (this dispatch is the run's first under it),
 * else the run's, else `$CATHERD_SANDBOX`, else off. Its allow list: the backend's provider endpoints, the
 * run's hosts and this dispatch's. Null: no sandbox. What widens a sandbox that is off is refused: it would be
 * silently ignored.
 */
export function resolveSandbox(
  asked: SandboxRequest,
  runs: RunSandbox | null,
  backend: BackendId,
  access: AccessLevel | null,
): SandboxPolicy | null {
  const run = asked.runMode === null ? runs?.mode : asked.runMode === "none" ? null : asked.runMode;
  const chosen: SandboxMode = asked.mode ?? run ?? asked.fromEnvironment ?? "off";
  const widening = [
    ...(asked.allowWrite.length > 0 ? ["--allow-write"] : []),
    ...(asked.denyRead.length > 0 ? ["--deny-read"] : []),
    ...(asked.allowNet.length > 0 ? ["--allow-net"] : []),
  ];
  if (chosen === "off") {
    if (widening.length > 0) {
      throw invalid(
        `${widening.join(" and ")} shape a sandbox, and this dispatch has none (--sandbox off)`,
        "add --sandbox files (or files+net), or leave them out",
      );
    }
    return null;
  }
  const sandboxedMode: SandboxedMode = chosen;
  if (sandboxedMode === "files" && asked.allowNet.length > 0) {
    throw invalid(
      "--allow-net is for --sandbox files+net: under --sandbox files the network is not sandboxed",
      "give --sandbox files+net, or leave --allow-net out",
    );
  }
  const providers = PROVIDER_ENDPOINTS[backend].map((host) => ({ host, port: 443 }));
  const runHosts = asked.runMode === null || asked.runMode === "none" ? (runs?.allowNet ?? []) : [];
  return {
    mode: sandboxedMode,
    allowWrite: asked.allowWrite,
    denyRead: asked.denyRead,
    allowNet: sandboxedMode === "files" ? [] : uniqueRules([...providers, ...runHosts, ...asked.allowNet]),
    workplace: sandboxedWorkplace(backend, access),
  };
}

/** The rules as a line of a message. */
export function rulesText(rules: readonly NetRule[]): string {
  return rules.map(netRuleText).join(", ");
}

/** The real path of `file` (symlinks, `..`, a trailing slash resolved); of the part that exists, for one that does not. */
function realPath(file: string): string {
  const absolute = path.resolve(file);
  try {
    return fs.realpathSync(absolute);
  } catch {
    const parent = path.dirname(absolute);
    return parent === absolute ? absolute : path.join(realPath(parent), path.basename(absolute));
  }
}

/**
 * Refuses an `--allow-write` that names the catherd home or anything in it, however spelled (a symlink to
 * it, `..`, a trailing slash): every dispatch's folder, record, spend and worktree is there, and the sandbox
 * keeps them read-only or hidden whatever the flags say (specs/sandbox.md), so the flag could only be
 * ignored. A folder above the home is not refused: it is writable around the home, which stays read-only.
 */
export function refuseCatherdWrites(allowWrite: readonly string[], home: string): void {
  const realHome = realPath(home);
  for (const asked of allowWrite) {
    if (!isWithin(realPath(asked), realHome)) continue;
    throw invalid(
      `--allow-write ${asked} is in the catherd home ${home}: what catherd judges by (every dispatch's folder, record and spend) stays read-only inside the sandbox, whatever the flags say`,
      `leave --allow-write ${asked} out: the workplace, $TMPDIR and catherd lock's slots are writable already; give a folder outside ${home}`,
    );
  }
}

/**
 * Refuses a wildcard of the allow list that leaves no registrable domain (`*.com`, `*.co.uk`,
 * `*.github.io`: every host of a public suffix, so of anyone), the run's remembered hosts included. The
 * public suffix list is loaded only when a wildcard is there to judge.
 */
export async function refuseWideWildcards(rules: readonly NetRule[]): Promise<void> {
  const wildcards = rules.filter((rule) => rule.host.startsWith("*."));
  if (wildcards.length === 0) return;
  const { publicSuffixWildcard } = await import("../../domain/sandbox/registrable.js");
  for (const rule of wildcards) {
    const suffix = publicSuffixWildcard(rule.host);
    if (suffix === null) continue;
    throw invalid(
      `--allow-net ${netRuleText(rule)}: ${suffix} is a public suffix, so ${rule.host} would open the hosts of anyone who registers a name under it`,
      `name the hosts it needs (--allow-net api.example.${suffix}), or a wildcard under one domain (--allow-net '*.example.${suffix}')`,
    );
  }
}

/** The sandbox flags as given. */
export interface RawSandboxFlags {
  sandbox?: string | undefined;
  runSandbox?: string | undefined;
  allowWrite?: readonly string[] | undefined;
  denyRead?: readonly string[] | undefined;
  allowNet?: readonly string[] | undefined;
}

/** The sandbox concern: its flags and its part of the request (the sandbox is resolved by the use case). */
/** A request's sandbox flags when its sandbox is already resolved (`sandboxPolicy`): a successor's. */
const NO_SANDBOX_FLAGS: SandboxRequest = {
  mode: null,
  runMode: null,
  fromEnvironment: null,
  allowWrite: [],
  denyRead: [],
  allowNet: [],
};

/** A recorded sandbox for another CLI: its provider endpoints added. */
function sandboxFor(policy: SandboxPolicy, backend: BackendId): SandboxPolicy {
  if (policy.mode === "files") return policy;
  const providers = PROVIDER_ENDPOINTS[backend].map((host) => ({ host, port: 443 }));
  return { ...policy, allowNet: uniqueRules([...providers, ...policy.allowNet]) };
}

export const sandbox = {
  options: {
    sandbox: {
      type: "string",
      value: "<mode>",
      description:
        "the sandbox catherd runs the agent in: files (it writes only its workplace, its temp folder and its CLI's state; secrets hidden), files+net (and reaches only the allowed hosts, through catherd's proxy)",
      choices: SANDBOX_MODES,
      default: "the run's (--run-sandbox), else $CATHERD_SANDBOX, else off",
    },
    "run-sandbox": {
      type: "string",
      value: "<mode>",
      description:
        "the sandbox of this and the run's later dispatches, with this dispatch's --allow-net (remembered in run.json); none forgets it",
      choices: [...SANDBOX_MODES, "none"],
    },
    "allow-write": {
      type: "string",
      value: "<path>",
      multiple: true,
      description:
        "a folder or file a sandboxed agent may write beside its workplace (outside the catherd home)",
    },
    "deny-read": {
      type: "string",
      value: "<path>",
      multiple: true,
      description:
        "a path hidden from a sandboxed agent beside the deny list (~/.ssh, ~/.aws, …: specs/sandbox.md)",
    },
    "allow-net": {
      type: "string",
      value: "<host[:port]>",
      multiple: true,
      description:
        "a host a files+net agent may reach (port 443 unless given; *.example.com for subdomains, never a public suffix's like *.com; 127.0.0.1:PORT for a loopback port), beside its provider's endpoints",
    },
  },
  validate: (raw, { cwd, environment }) => ({ sandbox: parseSandbox({ ...raw, cwd, environment }) }),
  // Only a mode asks a follow-up anew: --allow-net and the like given alone shape the turn's.
  anew: ["sandbox", "run-sandbox"],
  // Sandboxed as the recorded dispatch was: a chain's next attempt with its own CLI's provider endpoints
  // (specs/sandbox.md); a follow-up as its turn, unless it asks for a sandbox anew.
  carry: ({ spec }, to) => {
    if (spec?.sandbox === undefined)
      return to.kind === "follow-up" ? {} : { sandbox: NO_SANDBOX_FLAGS, sandboxPolicy: null };
    const sandboxPolicy = to.kind === "follow-up" ? spec.sandbox : sandboxFor(spec.sandbox, to.backend.id);
    return to.kind === "follow-up" ? { sandboxPolicy } : { sandbox: NO_SANDBOX_FLAGS, sandboxPolicy };
  },
} satisfies Concern<RawSandboxFlags, { sandbox: SandboxRequest; sandboxPolicy?: SandboxPolicy | null }>;
