import type { BackendId } from "../domain/vocab.js";
import type { Backend } from "./types.js";

// One backend's module, loaded alone: a supervisor runs one CLI and parses one wire format, so it loads
// that backend and not the other four (registry.ts holds them all, for the command line).

const LOADERS: Record<BackendId, () => Promise<Backend>> = {
  codex: async () => (await import("./codex.js")).codexBackend,
  "claude-code": async () => (await import("./claude-code.js")).claudeCodeBackend,
  opencode: async () => (await import("./opencode.js")).opencodeBackend,
  gemini: async () => (await import("./gemini.js")).geminiBackend,
  exec: async () => (await import("./exec.js")).execBackend,
};

/** The backend module for an id, imported on first use. */
export function loadBackend(id: BackendId): Promise<Backend> {
  return LOADERS[id]();
}
