// Closed vocabularies of the contract (specs/dispatch-folder.md, specs/record.md, specs/cli.md). Each is
// defined once; types and zod enums derive from it.

/** How a supervised dispatch ended (exit.json `reason`). */
export const EXIT_REASONS = [
  "exited",
  "after-final",
  "cancelled",
  "wall-timeout",
  "idle-timeout",
  "provider-unavailable",
  "spawn-failed",
  "supervisor-error",
  "lost",
  "budget",
] as const;
export type ExitReason = (typeof EXIT_REASONS)[number];

/** The verdict of a record. */
export const STATUSES = ["ok", "failed", "timeout", "cancelled", "limit", "lost"] as const;
export type Status = (typeof STATUSES)[number];

/**
 * Why a dispatch did not end well, in words an orchestrator can act on (specs/record.md). The first nine
 * (auth … cli) are what the provider or the CLI said; the next six are how catherd, or the machine's
 * memory limit (oom), ended or lost the dispatch; `budget` is a cap on spending reached (catherd's
 * --max-tokens or --max-cost, or the CLI's own budget); `disk` a file system that could no longer keep the
 * dispatch's files (full, over quota, failing); `answer-invalid` a final answer that did not fit the
 * dispatch's --answer-schema, its repairs spent (specs/record.md, "The answer"); `answer-over-limit` an
 * answer over catherd's limits (its size, its depth), which no repair can change; `record` an error of
 * catherd's own while it built the record (specs/record.md, "A record always comes"); `verify` a check
 * (`--verify`) still red when its repairs were spent, `verify-error` a check that could not judge the turn
 * (not found, past its time limit, no slot) (specs/dispatch.md, "Checks and races").
 */
export const ERROR_KINDS = [
  "auth",
  "quota",
  "rate-limit",
  "provider-down",
  "model",
  "context",
  "request",
  "resume",
  "cli",
  "timeout",
  "cancelled",
  "spawn",
  "supervisor",
  "lost",
  "oom",
  "budget",
  "disk",
  "answer-invalid",
  "answer-over-limit",
  "record",
  "verify",
  "verify-error",
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** The agent CLIs catherd knows, plus `exec` for any command. */
export const BACKEND_IDS = ["codex", "claude-code", "opencode", "gemini", "exec"] as const;
export type BackendId = (typeof BACKEND_IDS)[number];
/** The backend of a spec.json that names none: any command (specs/dispatch-folder.md). */
export const SPEC_DEFAULT_BACKEND: BackendId = "exec";

/**
 * What a reader reports about a dispatch (specs/cli.md, "The state of a dispatch"). `exited` here is the
 * state "exit.json written, record.json not yet", whatever the exit reason: not the ExitReason `exited`.
 */
export const DISPATCH_STATES = [
  "queued",
  "starting",
  "running",
  "stopping",
  "exited",
  "verifying",
  "recorded",
  "orphaned",
  "lost",
  "unknown",
] as const;
export type DispatchState = (typeof DISPATCH_STATES)[number];

/**
 * Why a queued dispatch waits (queued.json `blockedBy`): the run's cap, its backend's cap within the run,
 * an overlapping `--owns` of a live dispatch, a time before which it must not start, the run's budget
 * spent (`--run-budget`: it starts once the budget is raised), its accounts out of window (it starts at
 * a reset, specs/quota.md), or a budget by period spent (it starts when the period turns, specs/quota.md).
 */
export const QUEUE_BLOCKERS = [
  "capacity",
  "backend-cap",
  "host-cap",
  "host",
  "overlap",
  "not-before",
  "budget",
  "window",
  "period-budget",
] as const;
export type QueueBlocker = (typeof QUEUE_BLOCKERS)[number];

/**
 * Where a dispatch's supervisor runs (specs/placement.md): on the dispatching host, or handed to an
 * engine that already exists — a Slurm job, or a process started over ssh on another host.
 */
export const PLACEMENTS = ["local", "slurm", "ssh"] as const;
/** A placement's kind: `local`, or the engine's name. */
export type PlacementKind = (typeof PLACEMENTS)[number];
/** The placements that hand the supervisor to an engine: every one but `local`. */
export const ENGINES = ["slurm", "ssh"] as const;
/** An engine's name, as placement.json and `--placement` spell it; its code is src/engines/<name>/. */
export type EngineName = (typeof ENGINES)[number];
/**
 * A placement as `--placement` spells it: `local`, an engine's name, or an engine and its target — where
 * on the engine, for an engine that takes one (`ssh:HOST`). See src/domain/placement.ts.
 */
export type Placement = "local" | EngineName | `${EngineName}:${string}`;

/** Access levels a dispatch may ask of its CLI. */
export const ACCESS_LEVELS = ["read-only", "workspace-write", "full"] as const;
export type AccessLevel = (typeof ACCESS_LEVELS)[number];

/**
 * How a dispatch's processes were held (specs/supervisor.md, "Containment"): a cgroup of its own, or its
 * process group plus the sweep by parent chain and CATHERD_DISPATCH.
 */
export const CONTAINMENTS = ["cgroup", "group+sweep"] as const;
export type Containment = (typeof CONTAINMENTS)[number];

/**
 * Every error code catherd reports, on the command line and in exit.json / record.json. Each is raised
 * somewhere; specs/cli.md lists them with their exit codes.
 */
export const ERROR_CODES = [
  "E_INPUT_INVALID",
  "E_ADMIT_DUPLICATE",
  "E_ADMIT_OVERLAP",
  "E_ADMIT_CAPACITY",
  "E_RUN_BUDGET",
  "E_BACKEND_MISSING",
  "E_BACKEND_BROKEN",
  "E_BACKEND_TOO_OLD",
  "E_DISPATCH_NOT_FOUND",
  "E_RUN_NOT_FOUND",
  "E_NOT_RECORDED",
  "E_NO_ANSWER",
  "E_NOT_STEERABLE",
  "E_QUESTION_NOT_FOUND",
  "E_ALREADY_ANSWERED",
  "E_SPEC_INVALID",
  "E_SCHEMA_NEWER",
  "E_FILE_CORRUPT",
  "E_IO_LOCK",
  "E_LOCK_BUSY",
  "E_IO_WRITE",
  "E_IO_READ",
  "E_SPAWN_FAILED",
  "E_SUPERVISOR_START",
  "E_SUPERVISOR_SIGNALLED",
  "E_SUPERVISOR_LOST",
  "E_AGENT_OOM",
  "E_TIMEOUT",
  "E_ENGINE_MISSING",
  "E_ENGINE_UNCONFIGURED",
  "E_ENGINE_REFUSED",
  "E_ENGINE_TIMEOUT",
  "E_ENGINE_UNREACHABLE",
  "E_PLACEMENT_UNSHARED",
  "E_SANDBOX_UNAVAILABLE",
  "E_INTERRUPTED",
  "E_INTERNAL",
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * What `error.code` of exit.json and record.json may hold (a closed set): an error code, or — for a
 * verdict that names no error code, such as a CLI that failed by itself — the exit reason.
 */
export const ENDING_ERROR_CODES = [...ERROR_CODES, ...EXIT_REASONS] as const;
export type EndingErrorCode = (typeof ENDING_ERROR_CODES)[number];
