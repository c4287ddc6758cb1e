import { z } from "zod";
import type { AccessLevel, BackendId } from "../vocab.js";

// The sandbox (specs/sandbox.md): what an agent may write, read and reach, as words and rules with no I/O.
// The request parses flags into a SandboxPolicy, admission writes it into spec.json's `sandbox`, and the
// supervisor turns it into bubblewrap's mounts (supervisor/sandbox/) and its proxy's allow list.

/** `--sandbox`: `off` runs the agent as before; `files` sandboxes what it writes and reads; `files+net` also its network. */
export const SANDBOX_MODES = ["off", "files", "files+net"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];
/** A mode that sandboxes something: what spec.json's `sandbox.mode` holds (`off` is no `sandbox` at all). */
export type SandboxedMode = Exclude<SandboxMode, "off">;

/** A host the agent may reach through the proxy: a name (`*.example.com` for its subdomains) and a port. */
export interface NetRule {
  host: string;
  port: number;
}

/** The hosts of loopback: connections to them stay on this machine, each port allowed by name. */
export const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"] as const;

export function isLoopback(host: string): boolean {
  return (LOOPBACK_HOSTS as readonly string[]).includes(host.toLowerCase());
}

export const netRuleSchema = z.object({
  host: z.string().min(1).max(253),
  port: z.number().int().min(1).max(65_535),
});

/** spec.json's `sandbox`: absent means no sandbox. Paths are absolute. */
export const sandboxField = z.object({
  mode: z.enum(["files", "files+net"]),
  /** `--allow-write`: folders and files the agent may write beside its workplace. */
  allowWrite: z.array(z.string().min(1)),
  /** `--deny-read`: paths hidden from the agent beside the default deny list. */
  denyRead: z.array(z.string().min(1)),
  /** `--allow-net` and the backend's provider endpoints (files+net only). */
  allowNet: z.array(netRuleSchema),
  /**
   * Whether the agent may write its workplace: not under `--access read-only` (the sandbox enforces the
   * level for every CLI, whose own sandbox it replaces where the two would fight). Absent: it may.
   */
  workplace: z.enum(["write", "read"]).optional(),
});
export type SandboxPolicy = z.infer<typeof sandboxField>;

/**
 * Paths under a home that hold credentials of somebody or something other than the agent's CLI: hidden
 * from every sandboxed agent (specs/sandbox.md, "Files"). A path that does not exist is not hidden: bubblewrap
 * cannot mount over nothing, and a file created there later would be in a folder the agent cannot write.
 */
export const DENIED_UNDER_HOME = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".azure",
  ".config/gcloud",
  ".kube",
  ".docker/config.json",
  ".netrc",
  ".git-credentials",
  ".config/gh",
  ".config/hub",
  ".npmrc",
  ".pypirc",
  ".cargo/credentials.toml",
  ".config/github-copilot",
] as const;

/**
 * Each CLI's own state under a home: writable by its own agent (sessions, caches, its config rewritten),
 * and the login files in it readable by it alone — hidden from every other backend's agent.
 */
const CLI_STATE: Record<BackendId, { state: readonly string[]; login: readonly string[] }> = {
  codex: { state: [".codex"], login: [".codex/auth.json"] },
  "claude-code": {
    state: [".claude", ".claude.json", ".cache/claude", ".config/claude"],
    login: [".claude/.credentials.json"],
  },
  gemini: { state: [".gemini"], login: [".gemini/oauth_creds.json", ".gemini/google_accounts.json"] },
  opencode: {
    state: [".local/share/opencode", ".local/state/opencode", ".cache/opencode", ".config/opencode"],
    login: [".local/share/opencode/auth.json"],
  },
  exec: { state: [], login: [] },
};

/**
 * Where each CLI keeps its state when its environment moves it (CODEX_HOME, CLAUDE_CONFIG_DIR, the XDG
 * folders opencode follows): writable by its own agent as its folder under the home is.
 */
export function stateFromEnvironment(
  backend: BackendId,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const set = (name: string) => {
    const value = env[name];
    return value?.startsWith("/") === true ? [value] : [];
  };
  switch (backend) {
    case "codex":
      return set("CODEX_HOME");
    case "claude-code":
      return set("CLAUDE_CONFIG_DIR");
    case "gemini":
      return set("GEMINI_CLI_HOME").map((home) => `${home}/.gemini`);
    case "opencode":
      return ["XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"].flatMap((name) =>
        set(name).map((dir) => `${dir}/opencode`),
      );
    default:
      return [];
  }
}

/** Tool caches any agent may write (a package manager's downloads): not credentials, not verdicts. */
const CACHES_UNDER_HOME = [".npm", ".cache/node", ".cache/pip", ".cache/yarn"] as const;

/** A CLI's own state under a home (folders and files), the caches aside. */
export function cliStateUnderHome(backend: BackendId): readonly string[] {
  return CLI_STATE[backend].state;
}

/**
 * The workplace under a sandbox: read-only for `--access read-only`, and for codex given no level (its own
 * default is read-only, and its own sandbox cannot run inside catherd's: specs/backends.md).
 */
export function sandboxedWorkplace(backend: BackendId, access: AccessLevel | null): "write" | "read" {
  return access === "read-only" || (access === null && backend === "codex") ? "read" : "write";
}

/** What a backend's agent may write under a home beside its workplace: its CLI's state and tool caches. */
export function writableUnderHome(backend: BackendId): string[] {
  return [...CLI_STATE[backend].state, ...CACHES_UNDER_HOME];
}

/** What is hidden under a home from a backend's agent: the deny list and every other CLI's login. */
export function deniedUnderHome(backend: BackendId): string[] {
  const others = (Object.keys(CLI_STATE) as BackendId[])
    .filter((id) => id !== backend)
    .flatMap((id) => CLI_STATE[id].login);
  return [...DENIED_UNDER_HOME, ...others];
}

/**
 * The provider endpoints each CLI needs under `files+net` (its API, its login's token refresh); loopback
 * ports and registries come from `--allow-net`. A CLI pointed at another endpoint (a base URL in its
 * configuration) needs that one allowed by the user.
 */
export const PROVIDER_ENDPOINTS: Record<BackendId, readonly string[]> = {
  codex: ["api.openai.com", "chatgpt.com", "auth.openai.com"],
  "claude-code": ["api.anthropic.com", "console.anthropic.com", "statsig.anthropic.com"],
  gemini: [
    "generativelanguage.googleapis.com",
    "cloudcode-pa.googleapis.com",
    "oauth2.googleapis.com",
    "play.googleapis.com",
  ],
  opencode: ["api.anthropic.com", "api.openai.com", "models.dev", "opencode.ai"],
  exec: [],
};

const HOST_LABEL = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

/**
 * One `--allow-net HOST[:PORT]`: a host name (`*.example.com` for its subdomains), an IPv4 address or
 * `[::1]`, and a port (443 when none is given). A loopback host needs its port named: 443 on loopback is
 * rarely what is meant. Returns the rule, or why the text is not one.
 */
export function parseNetRule(text: string): NetRule | string {
  const trimmed = text.trim().toLowerCase();
  let host = trimmed;
  let port: number | null = null;
  const bracket = /^(\[[0-9a-f:]+\])(?::(\d+))?$/.exec(trimmed);
  if (bracket !== null) {
    host = bracket[1] as string;
    port = bracket[2] === undefined ? null : Number(bracket[2]);
  } else {
    const colon = trimmed.lastIndexOf(":");
    if (colon !== -1) {
      host = trimmed.slice(0, colon);
      const digits = trimmed.slice(colon + 1);
      if (!/^\d{1,5}$/.test(digits)) return `the port ${JSON.stringify(digits)} is not a number`;
      port = Number(digits);
    }
  }
  if (host !== "[::1]" && host.startsWith("[")) return "the only IPv6 address allowed is [::1]";
  if (host !== "[::1]" && !IPV4.test(host) && !HOST_LABEL.test(host)) {
    return `${JSON.stringify(host)} is not a host name`;
  }
  if (port !== null && (port < 1 || port > 65_535)) return `the port ${port} is not from 1 to 65535`;
  if (port === null && isLoopback(host)) return "a loopback host needs its port: 127.0.0.1:PORT";
  return { host: host === "[::1]" ? "::1" : host, port: port ?? 443 };
}

/** The rule as the user writes it. */
export function netRuleText(rule: NetRule): string {
  return `${rule.host.includes(":") ? `[${rule.host}]` : rule.host}:${rule.port}`;
}

/** Whether a connection to `host:port` is on the allow list. Loopback names are one another's aliases. */
export function allowsConnection(rules: readonly NetRule[], host: string, port: number): boolean {
  const wanted = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return rules.some((rule) => {
    if (rule.port !== port) return false;
    if (isLoopback(rule.host)) return isLoopback(wanted);
    if (rule.host.startsWith("*.")) return wanted.endsWith(rule.host.slice(1));
    return rule.host === wanted;
  });
}

/**
 * The first port a process without capabilities may listen on (the kernel's ip_unprivileged_port_start):
 * inside the sandbox, whose capabilities are dropped, the bridge cannot listen below it.
 */
export const FIRST_UNPRIVILEGED_PORT = 1024;

/**
 * The loopback ports of the allow list, each bridged into the sandbox's own loopback (specs/sandbox.md) —
 * but one below FIRST_UNPRIVILEGED_PORT, which is reached through the proxy only.
 */
export function loopbackPorts(rules: readonly NetRule[]): { bridged: number[]; proxyOnly: number[] } {
  const ports = [...new Set(rules.filter((r) => isLoopback(r.host)).map((r) => r.port))].sort(
    (a, b) => a - b,
  );
  return {
    bridged: ports.filter((port) => port >= FIRST_UNPRIVILEGED_PORT),
    proxyOnly: ports.filter((port) => port < FIRST_UNPRIVILEGED_PORT),
  };
}

/** The rules without repeats, in the order first given. */
export function uniqueRules(rules: readonly NetRule[]): NetRule[] {
  const seen = new Set<string>();
  return rules.filter((rule) => {
    const key = netRuleText(rule);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Whether `inner` is `outer` or below it (both absolute and normalised, POSIX). */
export function isWithin(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith("/") ? outer : `${outer}/`);
}

/** The folder a path is in (absolute and normalised, POSIX). */
export function parentOf(file: string): string {
  const slash = file.lastIndexOf("/");
  return slash <= 0 ? "/" : file.slice(0, slash);
}

/**
 * catherd's own places around a sandboxed dispatch (absolute, real): the catherd home — whose `runs/` holds
 * every dispatch folder, worktree and spend file, and whose other files (the compile cache) catherd runs —
 * and the dispatch's own folder, of which the agent may write only its `scratch` (`tmp/`, `locks/`).
 */
export interface CatherdPlaces {
  home: string;
  dir: string;
  scratch: readonly string[];
}

/** Whether `place` is in a worktree of the home: `<home>/runs/<run>/worktrees/<id>` or below it. */
export function isWorktreePlace(place: string, home: string): boolean {
  const runs = `${home}/runs`;
  if (!isWithin(place, runs) || place === runs) return false;
  const parts = place.slice(runs.length + 1).split("/");
  return parts.length >= 3 && parts[1] === "worktrees";
}

/**
 * Whether the sandbox may leave `place` writable (specs/sandbox.md, "What catherd judges by stays out of
 * reach"): anywhere outside catherd's own places — one that holds them is writable around them, and they
 * are mounted back read-only over it — and inside them only the home's `locks/` (the heavy slots), a
 * worktree, and the dispatch's scratch. Nothing that holds a verdict, a spend or another dispatch's folder.
 */
export function sandboxMayWrite(place: string, own: CatherdPlaces): boolean {
  if (isWithin(place, own.dir)) return own.scratch.some((scratch) => isWithin(place, scratch));
  if (!isWithin(place, own.home)) return true;
  return isWithin(place, `${own.home}/locks`) || isWorktreePlace(place, own.home);
}

/** What the sandbox refused, as the record counts it (specs/record.md, "sandbox"). */
export interface SandboxAccount {
  mode: SandboxedMode;
  /** Connections refused (sandbox.log's `denied` lines). */
  denied: number;
  /** The first refused, as `--allow-net` would allow it; null when none was. */
  firstDenied: string | null;
  /** A write the agent's stderr says a read-only file system refused (the sandbox's doing), or null. */
  refusedWrite: string | null;
}

/**
 * The path of the first write a read-only file system refused, from the agent's stderr lines: what shells,
 * coreutils and Node print ("cannot create X: Read-only file system", "EROFS: …, open 'X'"). The kernel
 * tells no one else of a refused write; the agent's own words are where it shows.
 */
export function refusedWriteIn(lines: readonly string[]): string | null {
  for (const line of lines) {
    const node = /EROFS: read-only file system, \w+ '([^']+)'/.exec(line);
    if (node !== null) return node[1] as string;
    const shell =
      /(?:cannot create(?: directory| regular file)?|cannot touch|can't create|cannot open) '?([^':]+)'?: Read-only file system/i.exec(
        line,
      );
    if (shell !== null) return (shell[1] as string).trim();
    const generic = /^(?:[\w.-]+: )*'?(\/[^':]+)'?: Read-only file system/.exec(line);
    if (generic !== null) return generic[1] as string;
  }
  return null;
}

/**
 * The sandbox's part of a failure line: what it refused and the flag that would allow it, or null when it
 * refused nothing the agent told of. A write into a place the sandbox keeps read-only whatever the flags
 * say (`kept`: sandbox.log's `readOnly`, catherd's own files and a repository's hooks) names no flag. A
 * sandbox is never the whole story (a CLI may fail for its own reason after a refusal it survived): the
 * words say "refused", not "failed because".
 */
export function sandboxWords(account: SandboxAccount, kept: readonly string[] = []): string | null {
  const parts: string[] = [];
  if (account.firstDenied !== null) {
    const more = account.denied > 1 ? ` (and ${account.denied - 1} more)` : "";
    parts.push(
      `the sandbox refused a connection to ${account.firstDenied}${more}: allow it with --allow-net ${account.firstDenied}`,
    );
  }
  const write = account.refusedWrite;
  if (write !== null && kept.some((place) => isWithin(write, place))) {
    parts.push(
      `the sandbox refused a write to ${write}: it stays read-only inside the sandbox, whatever --allow-write says`,
    );
  } else if (write !== null) {
    parts.push(`the sandbox refused a write to ${write}: allow it with --allow-write ${parentOf(write)}`);
  }
  return parts.length === 0 ? null : parts.join("; ");
}
