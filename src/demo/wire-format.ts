import type { BackendId } from "../domain/vocab.js";

/** The backend whose event format the simulated agent writes (`codex exec --json`: simulated-agent.ts). */
export const SIMULATED_AGENT_FORMAT: BackendId = "codex";
