import { backendFor } from "../backends/backend-registry.js";
import type { Backend } from "../backends/types.js";
import { CatherdError } from "../domain/errors.js";
import { placementParts } from "../domain/placement.js";
import type { EngineName } from "../domain/vocab.js";
import type { PlacementWhere, Submitted } from "../engines/engine.js";
import { FILES } from "../folder/layout.js";
import { readFolderJson } from "../folder/read.js";
import { readRunFile } from "../folder/run-file.js";
import { type Clock, systemClock } from "../infra/clock.js";
import { okValue } from "../infra/json-file.js";
import { runPaths } from "../infra/paths.js";
import { ensureWaker } from "../quota/waker-start.js";
import { type Admitted, admit } from "./admission.js";
import { placedReadiness } from "./place-readiness.js";
import { launchPromoted } from "./queue/promote.js";
import { launchOrRequeue } from "./queue/requeue.js";
import { queuePositions } from "./read/queued.js";
import { doDutiesIn } from "./reader.js";
import type { DispatchRequest } from "./request/dispatch-request.js";
import { admitPlacementOf, resolvePlacement } from "./request/placement.js";
import { checkReadiness } from "./request/readiness.js";
import { refuseCatherdWrites, refuseWideWildcards, resolveSandbox } from "./request/sandbox-input.js";
import { StandbyReserve } from "./start/standby-reserve.js";

/** A dispatch started: admitted, and its supervisor up (or submitted to its engine) — or waiting in the run's queue. */
export interface Started {
  admitted: Admitted;
  /** Null while it waits in the queue (its supervisor starts when it is promoted), or for an engine's job. */
  supervisorPid: number | null;
  /** The job an engine took the supervisor as (specs/placement.md); null for a local or a queued dispatch. */
  submitted: Submitted | null;
  /** Its place in the run's queue (1 = next), null when it was not queued. */
  position: number | null;
}

export interface StartOptions {
  home: string;
  /**
   * The caller's standby reserve (dispatch/start/standby-reserve.ts): the dispatch takes its standby from
   * it and hands it back. Not given: a reserve of its own, whose standby starts here, before readiness and
   * admission, so that its start-up overlaps them.
   */
  standbys?: StandbyReserve;
  clock?: Clock;
}

/**
 * `dispatch` (specs/dispatch.md): readiness of the CLI and of every rung of its ladder, then admission,
 * then the supervisors — its own, given the standby when it starts at once; else the standby goes to the
 * first queued dispatch its admission promoted — and last the reader's duties admission found (dead
 * dispatches to record, orphans to adopt), which never delay its own supervisor. Throws what refused it;
 * nothing is written then.
 */
export async function startDispatch(request: DispatchRequest, options: StartOptions): Promise<Started> {
  const clock = options.clock ?? systemClock;
  const standbys = options.standbys ?? new StandbyReserve();
  const standby = standbys.take(options.home);
  try {
    const placed = placedRequest(request, options.home);
    const ready = await checkReady(placed, options.home, clock);
    const admission = await admit(ready, options.home, clock);
    // Queued ones promoted on the way start too; a queued newcomer leaves the standby to the first of them.
    const [first, ...others] = admission.promoted;
    const promotions = launchPromoted(others, null, clock);
    const launched =
      admission.queued === null ? await launchOrRequeue(admission.dir, { standby, clock }) : null;
    // Its host did not answer: it went back to the queue (start/requeue.ts), and says so as a queued one.
    const admitted =
      launched === "requeued"
        ? { ...admission, queued: okValue(readFolderJson(admission.dir, FILES.queued)) }
        : admission;
    if (first !== undefined) {
      const given = admitted.queued === null ? null : standby;
      await launchOrRequeue(first, { standby: given, clock }).catch(() => null);
    }
    await promotions;
    await doDutiesIn(admitted.withDuties, clock);
    // Parked for a reset (or any queued work that waits for a time): the home's waker starts it then.
    if (admitted.queued !== null) ensureWaker(options.home, clock.wallNow().getTime());
    const position =
      admitted.queued === null ? null : (queuePositions(admitted.run).get(admitted.dispatchId) ?? null);
    return {
      admitted,
      supervisorPid: typeof launched === "object" && launched?.placement === "local" ? launched.pid : null,
      submitted:
        launched === null || launched === "requeued" || launched.placement === "local" ? null : launched,
      position,
    };
  } finally {
    standbys.refill(options.home, standby);
    if (options.standbys === undefined) standbys.close();
  }
}

/**
 * The request with its placement resolved (specs/placement.md): `--placement`, else `--run-placement`,
 * else the run's (run.json, read without its lock: admission writes it under the lock), else
 * `$CATHERD_PLACEMENT`, else local.
 */
export function placedRequest(request: DispatchRequest, home: string): DispatchRequest {
  const runFile = readRunFile(runPaths(home, request.run));
  const placement = resolvePlacement(request.placement, runFile?.placement ?? null);
  // An engine's options for a dispatch that runs locally are refused here, before anything is written.
  admitPlacementOf(placement, request.placement);
  const sandboxPolicy =
    request.sandboxPolicy !== undefined
      ? request.sandboxPolicy
      : resolveSandbox(request.sandbox, runFile?.sandbox ?? null, request.backend.id, request.access);
  return { ...request, placement: { ...request.placement, placement }, sandboxPolicy };
}

/**
 * The sandbox is one catherd can keep — no --allow-write into its home, no wildcard over a public suffix —
 * and can run here (specs/sandbox.md, "Where it runs"): else E_INPUT_INVALID, or E_SANDBOX_UNAVAILABLE
 * with the fix, before anything is written. A dispatch placed on an engine is sandboxed by its supervisor on
 * the node, which checks again there.
 */
async function checkSandbox(request: DispatchRequest, home: string): Promise<void> {
  if (request.sandboxPolicy == null) return;
  refuseCatherdWrites(request.sandboxPolicy.allowWrite, home);
  await refuseWideWildcards(request.sandboxPolicy.allowNet);
  const { sandboxUnavailable } = await import("../infra/sandbox/probe.js");
  const missing = await sandboxUnavailable(request.sandboxPolicy.mode);
  if (missing === null) return;
  throw new CatherdError(
    "E_SANDBOX_UNAVAILABLE",
    `--sandbox ${request.sandboxPolicy.mode} cannot run here: ${missing.what}: ${missing.detail}`,
    { fix: `${missing.fix ?? "see catherd doctor"}; or dispatch with --sandbox off` },
  );
}

/**
 * The dispatch's engine can take a job from here (installed, configured, answering): else its refusal.
 * Checked before admission, so that an engine installed but not configured leaves no failed dispatch
 * behind, nor a `--run-placement` remembered for the run's later dispatches.
 */
async function checkEngineUsable(name: EngineName, where: PlacementWhere): Promise<void> {
  const { engineNamed } = await import("../engines/engine-registry.js");
  const unusable = await (await engineNamed(name)).unusable(where);
  if (unusable !== null) throw unusable;
}

/**
 * Readiness before admission: a CLI that cannot start, or is too old, fails here, before any write. The
 * CLI and every rung of its --fallback ladder, checked at once; for a dispatch placed on an engine, the
 * engine's client commands too (E_ENGINE_MISSING). An engine that starts the supervisor on another host
 * answers for that host instead (specs/placement.md, "Readiness on the host"): the CLIs run there, so this
 * host's own are not asked, and the request comes back with each CLI at the path the host has it.
 */
export async function checkReady(
  request: DispatchRequest,
  home: string,
  clock: Clock,
): Promise<DispatchRequest> {
  const placed = placementParts(request.placement.placement ?? "local");
  const checks = [
    { backend: request.backend, bin: request.bin },
    ...(request.chain?.rungs ?? []).map((rung) => ({ backend: backendFor(rung.backend), bin: rung.bin })),
  ];
  if (placed?.engine != null) {
    const where = { home, target: placed.target };
    const elsewhere = await readyElsewhere(placed.engine, where, request, checks);
    if (elsewhere !== null) {
      await checkSandbox(request, home);
      return elsewhere;
    }
    await checkEngineUsable(placed.engine, where);
  }
  await checkSandbox(request, home);
  const ready = await Promise.all(checks.map((c) => checkReadiness(c.backend, c.bin, home, clock)));
  const problem = ready.find((r) => r.problem !== null)?.problem;
  if (problem != null) throw problem;
  return request;
}

/**
 * For an engine that answers readiness on its host: the request with each CLI at the path the host has
 * it, or the host's refusal thrown; null for an engine that does not (its CLIs are this host's). A command
 * given after `--` (exec) is not a CLI to check there, as it is not here.
 */
async function readyElsewhere(
  engine: EngineName,
  where: PlacementWhere,
  request: DispatchRequest,
  checks: readonly { backend: Backend; bin: string }[],
): Promise<DispatchRequest | null> {
  const wanted = checks.filter((c) => c.backend.command === "cli");
  const found = await placedReadiness(
    engine,
    where,
    wanted.map((c) => ({ backend: c.backend, here: c.bin })),
  );
  if (found === null) return null;
  if (found.report.problem !== null) throw found.report.problem;
  const problem = found.clis.find((c) => c.judged.problem !== null)?.judged.problem;
  if (problem != null) throw problem;
  const pathOf = (backend: Backend, bin: string) =>
    found.clis.find((c) => c.backend.id === backend.id)?.there.path ?? bin;
  const rungs = request.chain?.rungs.map((rung) => ({
    ...rung,
    bin: pathOf(backendFor(rung.backend), rung.bin),
  }));
  return {
    ...request,
    bin: pathOf(request.backend, request.bin),
    chain: request.chain === null || rungs === undefined ? request.chain : { ...request.chain, rungs },
  };
}
