import { BACKEND_IDS, type BackendId } from "../domain/vocab.js";
import { claudeCodeBackend } from "./claude-code.js";
import { codexBackend } from "./codex.js";
import { execBackend } from "./exec.js";
import { geminiBackend } from "./gemini.js";
import { opencodeBackend } from "./opencode.js";
import type { Backend } from "./types.js";

const BACKENDS: Record<BackendId, Backend> = {
  codex: codexBackend,
  "claude-code": claudeCodeBackend,
  opencode: opencodeBackend,
  gemini: geminiBackend,
  exec: execBackend,
};

/** The backend module for an id. */
export function backendFor(id: BackendId): Backend {
  return BACKENDS[id];
}

/** The backend a user named, or null when no backend has that id. */
export function backendNamed(name: string): Backend | null {
  const id = BACKEND_IDS.find((known) => known === name);
  return id === undefined ? null : BACKENDS[id];
}

/** Every backend this catherd ships, in a stable order. */
export function allBackends(): Backend[] {
  return Object.values(BACKENDS);
}
