import { z } from "zod";
import { checked } from "../../domain/checked.js";
import { CatherdError } from "../../domain/errors.js";
import { MAX_HOST_CAPS } from "../../domain/placement.js";
import { backendIdSchema } from "../../domain/schemas.js";
import type { RunBudget } from "../../domain/spend/run-budget.js";
import { BACKEND_IDS, type BackendId } from "../../domain/vocab.js";
import { ENGINE_TARGETS } from "../../engines/engine-registry.js";
import { validateRunBudget } from "./caps-input.js";
import type { Concern } from "./concern.js";
import { shownValue } from "./text.js";

// What a dispatch says about its run's limits (specs/dispatch.md §2, §7, §11): --max-parallel,
// --max-parallel-backend and --max-parallel-host, remembered in run.json; --run-budget; and --queue, to wait where a cap or an
// overlap would refuse it. Remembered by the run, never carried by a successor.

export interface RawRunCapsInput {
  maxParallel?: string | undefined;
  maxParallelBackend?: readonly string[] | undefined;
  maxParallelHost?: readonly string[] | undefined;
  runBudget?: string | undefined;
  queue?: boolean | undefined;
}

export interface RunCapsRequest {
  /** A cap of live dispatches in the run to remember; `none` removes the remembered one. */
  maxParallel: number | "none" | null;
  /** `--max-parallel-backend codex=3`, per backend. */
  maxParallelBackend: Partial<Record<BackendId, number>>;
  /** `--max-parallel-host box=2`, per host a placement names. */
  maxParallelHost: Record<string, number>;
  /** `--run-budget`: the run's budget to remember (it replaces the one before), `none` to remove it. */
  runBudget: RunBudget | "none" | null;
  /** `--queue`: wait in the run's queue where admission would refuse for a cap or an overlap. */
  queue: boolean;
}

export const runCaps = {
  options: {
    "max-parallel": {
      type: "string",
      value: "<n|none>",
      description: "cap of live dispatches in the run, remembered in run.json; none removes it",
      default: "the run's, else none",
    },
    "max-parallel-backend": {
      type: "string",
      value: "<backend>=<n>",
      multiple: true,
      description: "cap of live dispatches of one backend in the run (remembered in run.json)",
    },
    "max-parallel-host": {
      type: "string",
      value: "<host>=<n>",
      multiple: true,
      description:
        "cap of live dispatches placed on one host (--placement ssh:<host>, the host as written there) in the run (remembered in run.json)",
    },
    "run-budget": {
      type: "string",
      value: "<tokens=n,usd=n,minutes=n|none>",
      description:
        "what the whole run may spend, remembered in run.json (given again it replaces; none removes it): a spent run admits nothing more, starts nothing from its queue, and its live dispatches are stopped",
      default: "the run's, else none",
    },
    queue: {
      type: "boolean",
      description:
        "where a cap or an overlapping --owns would refuse it, wait in the run's queue: it starts, oldest first, as soon as nothing blocks it",
    },
  },
  // A chain's next attempt waits in the queue where the run blocks it, and says nothing of the run's caps.
  carry: (_recorded, to) =>
    to.kind === "follow-up"
      ? {}
      : { maxParallel: null, maxParallelBackend: {}, maxParallelHost: {}, runBudget: null, queue: true },
  validate: (raw) => ({
    maxParallel: parseMaxParallel(raw.maxParallel),
    maxParallelBackend: parseBackendCaps(raw.maxParallelBackend ?? []),
    maxParallelHost: parseHostCaps(raw.maxParallelHost ?? []),
    runBudget: validateRunBudget(raw.runBudget),
    queue: raw.queue === true,
  }),
} satisfies Concern<RawRunCapsInput, RunCapsRequest>;

/**
 * `--max-parallel <n>`: a cap of live dispatches in the run, remembered in run.json; `none` removes the
 * remembered cap (0 is refused: a run that may run nothing is a mistake, not a cap). Null: not given.
 */
function parseMaxParallel(text: string | undefined): number | "none" | null {
  if (text === undefined) return null;
  if (text === "none") return "none";
  const cap = z
    .string()
    .regex(/^[0-9]{1,12}$/)
    .transform(Number)
    .pipe(z.number().int().min(1).max(10_000));
  return checked(
    cap,
    text,
    () =>
      new CatherdError(
        "E_INPUT_INVALID",
        `--max-parallel ${shownValue(text)}: it is a whole number from 1 to 10000, or none`,
        { fix: "give --max-parallel <n>, or --max-parallel none to remove the run's cap" },
      ),
  );
}

/** `--max-parallel-backend codex=3` (repeatable): a cap of live dispatches per backend within the run. */
function parseBackendCaps(pairs: readonly string[]): Partial<Record<BackendId, number>> {
  const caps: Partial<Record<BackendId, number>> = {};
  const fix = `give --max-parallel-backend <backend>=<n>, backend one of ${BACKEND_IDS.join(", ")}, n from 1 to 10000`;
  for (const pair of pairs) {
    const [backend, n, extra] = pair.split("=");
    const refuse = () =>
      new CatherdError(
        "E_INPUT_INVALID",
        `--max-parallel-backend ${JSON.stringify(pair.slice(0, 80))} is not <backend>=<n>`,
        { fix },
      );
    const id = checked(backendIdSchema, backend, refuse);
    const cap = Number(n);
    if (extra !== undefined || !/^[0-9]+$/.test(n ?? "") || cap < 1 || cap > 10_000) throw refuse();
    caps[id] = cap;
  }
  return caps;
}

/**
 * `--max-parallel-host box=2` (repeatable): a cap of live dispatches per host within the run. The host is
 * checked as a placement's target is (an engine that takes one must take it), so a cap is only ever
 * keyed by a host a dispatch could be placed on.
 */
function parseHostCaps(pairs: readonly string[]): Record<string, number> {
  const caps: Record<string, number> = {};
  const fix = "give --max-parallel-host <host>=<n>, the host as --placement names it, n from 1 to 10000";
  for (const pair of pairs) {
    const at = pair.lastIndexOf("=");
    const host = pair.slice(0, at);
    const n = pair.slice(at + 1);
    const cap = Number(n);
    if (at <= 0 || !/^[0-9]{1,5}$/.test(n) || cap < 1 || cap > 10_000 || !isTarget(host)) {
      throw new CatherdError(
        "E_INPUT_INVALID",
        `--max-parallel-host ${JSON.stringify(pair.slice(0, 80))} is not <host>=<n>`,
        { fix },
      );
    }
    caps[host] = cap;
  }
  if (Object.keys(caps).length > MAX_HOST_CAPS) {
    throw new CatherdError("E_INPUT_INVALID", `--max-parallel-host names more than ${MAX_HOST_CAPS} hosts`, {
      fix,
    });
  }
  return caps;
}

/** Whether some engine that takes a target takes `host`. */
function isTarget(host: string): boolean {
  return Object.values(ENGINE_TARGETS).some((target) => {
    try {
      target.check(host);
      return true;
    } catch {
      return false;
    }
  });
}
