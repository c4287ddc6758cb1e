import * as path from "node:path";

// Which id a dispatch folder goes by. Written once here: the supervisor, the reader and the record
// writer must agree, or a sweep would look for the wrong variable.

interface Named {
  dispatchId?: string | undefined;
}

/**
 * The id the dispatch's processes carry as CATHERD_DISPATCH: spec.json's `dispatchId`, else the folder's
 * name (a hand-written spec may leave it out). The supervisor sets it from the spec alone.
 */
export function agentDispatchId(folder: { dir: string; spec: Named | null }): string {
  return folder.spec?.dispatchId ?? path.basename(folder.dir);
}

/** The id a dispatch is known by: admit.json's, else the id its processes carry. */
export function dispatchIdOf(folder: { dir: string; admit: Named | null; spec: Named | null }): string {
  return folder.admit?.dispatchId ?? agentDispatchId(folder);
}
