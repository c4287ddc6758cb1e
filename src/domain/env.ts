// The agent's environment: the dispatcher's own (so the user's credentials and settings work), minus what
// would make the agent take itself for the orchestrator, plus catherd's markers (specs/dispatch.md §4).

/** Variables naming the orchestrator's own session or thread, which a dispatched agent must not inherit. */
export const ORCHESTRATOR_VARIABLES = [
  "CODEX_THREAD_ID",
  "CODEX_SESSION_ID",
  "CODEX_MANAGED_BY_NPM",
  "CLAUDECODE",
  "CLAUDE_CODE_SESSION_ID",
  "CLAUDE_CODE_ENTRYPOINT",
  "CLAUDE_CODE_SSE_PORT",
  "GEMINI_CLI",
  "GEMINI_SESSION_ID",
  "OPENCODE",
  "OPENCODE_SESSION_ID",
  "OPENCODE_SERVER",
] as const;

const SCRUBBED = new Set<string>(ORCHESTRATOR_VARIABLES);

/**
 * The CATHERD_* variables an agent keeps: the home, and the machine's heavy-slot count, so that the
 * `catherd lock` an agent runs shares its slots with every other catherd process of the home, under the
 * number its user set (specs/lock.md, "The slot count").
 */
const KEPT_CATHERD = new Set(["CATHERD_HOME", "CATHERD_LOCK_SLOTS"]);

/** Whether an inherited variable is dropped: the list above and every CATHERD_* but the kept ones. */
export function isScrubbed(name: string): boolean {
  return SCRUBBED.has(name) || (name.startsWith("CATHERD_") && !KEPT_CATHERD.has(name));
}

/** Where the agent works: its folder (PWD) and its private temp folder (TMPDIR, TMP, TEMP), if any. */
export interface AgentPlace {
  cwd: string;
  tmp: string | null;
}

/** What catherd lays over the inherited environment (see agentEnvironment). */
export interface EnvironmentLayers {
  /** --env: set whatever they name. */
  overrides: Readonly<Record<string, string>>;
  markers: { dispatchId: string; run: string | null; dir?: string };
  place?: AgentPlace | null;
  /** --pass-env: variables given by name, their values the inherited ones. */
  passed?: readonly string[];
}

/**
 * Builds the agent's environment, each layer over the one before: the inherited variables (scrubbed),
 * its place, `overrides` (--env), the variables `passed` by name (--pass-env: the inherited value, even of
 * a scrubbed name, since it was asked for), and catherd's markers over all.
 */
export function agentEnvironment(
  inherited: Readonly<Record<string, string | undefined>>,
  { overrides, markers, place = null, passed = [] }: EnvironmentLayers,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(inherited)) {
    if (value !== undefined && !isScrubbed(name)) env[name] = value;
  }
  if (place !== null) Object.assign(env, placeVariables(place));
  Object.assign(env, overrides);
  for (const name of passed) {
    const value = inherited[name];
    if (value !== undefined) env[name] = value;
  }
  env.CATHERD_DISPATCH = markers.dispatchId;
  if (markers.run !== null) env.CATHERD_RUN = markers.run;
  // The dispatch folder itself: where a `catherd lock` of the agent reports (specs/lock.md).
  if (markers.dir !== undefined) env.CATHERD_DISPATCH_DIR = markers.dir;
  return env;
}

/** PWD, and the private temp folder under every name a program looks for it by. */
function placeVariables(place: AgentPlace): Record<string, string> {
  if (place.tmp === null) return { PWD: place.cwd };
  return { PWD: place.cwd, TMPDIR: place.tmp, TMP: place.tmp, TEMP: place.tmp };
}

/** Whether a variable's value is a secret that `show` must not print. */
export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase();
  return (
    /_(KEY|TOKEN|SECRET)$/.test(upper) || upper.includes("PASSWORD") || /^(KEY|TOKEN|SECRET)$/.test(upper)
  );
}
