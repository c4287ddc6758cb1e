import type { Backend } from "./types.js";

// The one check of a thread a turn's CLI named, before catherd resumes it (specs/dispatch.md §13 and
// §14): a follow-up and the repair turn of an answer ask it alike, and it answers in the turn's words. A
// thread a person typed (`--thread`) meets the same `checkThread`, in its flag's words (request.ts).

/** Null when the thread a turn's record names can be resumed on `backend`; else why not, in the turn's words. */
export function resumeProblem(backend: Backend, thread: string | null): string | null {
  if (backend.checkThread === undefined) return `${backend.id} has no thread to continue`;
  if (thread === null) return "its CLI never named its thread";
  const problem = backend.checkThread(thread);
  return problem === null ? null : `its CLI named a thread ${backend.id} cannot resume (${problem})`;
}
