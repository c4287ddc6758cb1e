/** Spec defaults that do not depend on the backend (specs/dispatch-folder.md, "spec.json"). */
export const SPEC_DEFAULTS = {
  killGraceMs: 10_000,
  pollMs: 250,
  providerRetry: { attempts: 3, windowMs: 180_000 },
} as const;

/** The stall notice comes at half the idle time unless a spec says otherwise. */
export function defaultStallMs(idleMs: number): number {
  return Math.max(1, Math.floor(idleMs / 2));
}
