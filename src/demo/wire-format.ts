import type { BackendId } from "../domain/vocab.js";

/** The backend whose event format the simulated agent writes (`codex exec --json`: simulated-agent.ts). */
export const SIMULATED_AGENT_FORMAT: BackendId = "codex";

/**
 * What the simulated agent answers to `--version`, as the CLI it simulates would: the version of that
 * CLI whose stream format it writes, so that readiness (dispatch/request/readiness.ts) accepts it.
 */
export const SIMULATED_AGENT_VERSION = "codex-cli 0.171.0 (catherd's simulated agent)";
