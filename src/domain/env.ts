// The agent's environment: the dispatcher's own (so the user's credentials and settings work), minus what
// would make the agent take itself for the orchestrator, plus catherd's markers (design.md §7).

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

/** Whether an inherited variable is dropped: the list above and every CATHERD_* except the home. */
export function isScrubbed(name: string): boolean {
  return SCRUBBED.has(name) || (name.startsWith("CATHERD_") && name !== "CATHERD_HOME");
}

/** Builds the agent's environment; `overrides` win over the inherited values, the markers over both. */
export function agentEnvironment(
  inherited: Readonly<Record<string, string | undefined>>,
  overrides: Readonly<Record<string, string>>,
  markers: { dispatchId: string; run: string | null },
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(inherited)) {
    if (value !== undefined && !isScrubbed(name)) env[name] = value;
  }
  Object.assign(env, overrides);
  env.CATHERD_DISPATCH = markers.dispatchId;
  if (markers.run !== null) env.CATHERD_RUN = markers.run;
  return env;
}

/** Whether a variable's value is a secret that `show` must not print. */
export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase();
  return (
    /_(KEY|TOKEN|SECRET)$/.test(upper) || upper.includes("PASSWORD") || /^(KEY|TOKEN|SECRET)$/.test(upper)
  );
}
