import * as path from "node:path";
import { backendFor } from "../../src/backends/backend-registry.js";
import { SCHEMA_VERSION, type Spec } from "../../src/domain/schemas.js";
import type { BackendId } from "../../src/domain/vocab.js";
import type { Clock } from "../../src/infra/clock.js";
import type { RunningChild } from "../../supervisor/child.js";
import { systemFiles } from "../../supervisor/deps.js";
import { watchAgent } from "../../supervisor/watch-loop.js";

// The watch loop driven in process with an injected clock and an agent that never exits: the loop then
// ends only by one of its rules, at a time the clock says.

/** A complete spec for `dir`, every limit given; `overrides` win. */
export function loopSpec(dir: string, backend: BackendId, overrides: Partial<Spec> = {}): Spec {
  return {
    schema: SCHEMA_VERSION,
    dispatchId: path.basename(dir),
    backend,
    cmd: "/bin/true",
    args: [],
    env: {},
    cwd: dir,
    stdinPath: null,
    idleMs: 1000,
    wallMs: 90 * 60_000,
    stallMs: 500,
    killGraceMs: 300,
    graceAfterFinalMs: null,
    pollMs: 100,
    providerRetry: { attempts: 3, windowMs: 180_000 },
    memoryBytes: null,
    maxProcs: null,
    worktree: null,
    passEnv: [],
    keepTmp: false,
    maxTokens: null,
    maxCostUsd: null,
    ...overrides,
  };
}

/** An agent that never exits. */
export function neverExitingChild(): RunningChild {
  return {
    pid: 999_999,
    pgid: 999_999,
    exit: null,
    exited: new Promise(() => {}),
    exitSignal: new AbortController().signal,
    letRun: () => {},
  };
}

/** Runs the loop over `dir` until a rule stops it; the reason it gives. */
export async function watchUntilStopped(dir: string, clock: Clock, spec: Spec) {
  const outcome = await watchAgent({
    dir,
    spec,
    backend: backendFor(spec.backend),
    child: neverExitingChild(),
    deps: { clock, files: systemFiles },
    log: () => {},
    interrupt: new AbortController().signal,
  });
  return outcome.reason;
}
