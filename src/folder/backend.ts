import { backendFor } from "../backends/backend-registry.js";
import type { Backend } from "../backends/types.js";
import { type BackendId, SPEC_DEFAULT_BACKEND } from "../domain/vocab.js";

interface UsesBackend {
  backend?: BackendId | undefined;
}

/** The backend a folder names: admit.json's, else spec.json's; null when neither can be read. */
export function backendIdOf(folder: {
  admit: UsesBackend | null;
  spec: UsesBackend | null;
}): BackendId | null {
  return folder.admit?.backend ?? folder.spec?.backend ?? null;
}

/**
 * The backend module that reads a folder's event stream and makes its record: the one it names, else
 * the backend of a spec that names none.
 */
export function backendOf(folder: { admit: UsesBackend | null; spec: UsesBackend | null }): Backend {
  return backendFor(backendIdOf(folder) ?? SPEC_DEFAULT_BACKEND);
}
