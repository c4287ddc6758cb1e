import { z } from "zod";
import { execBackend } from "../../backends/exec.js";
import { AGENT_DEFAULTS } from "../../backends/line-parsing.js";
import { checked } from "../../domain/checked.js";
import { SPEC_DEFAULTS } from "../../domain/defaults.js";
import { CatherdError } from "../../domain/errors.js";
import { compactDuration, parseDuration } from "../../domain/text/duration.js";
import { parseSize } from "../../domain/text/size.js";
import type { Concern } from "./concern.js";
import { shownValue } from "./text.js";

// The limits of one dispatch (specs/dispatch.md §1): --idle and --wall, the stop's --kill-grace, and the
// cgroup's --memory and --max-procs. A chain's next attempt runs under the same limits.

export interface RawLimitsInput {
  idle?: string | undefined;
  wall?: string | undefined;
  killGrace?: string | undefined;
  memory?: string | undefined;
  maxProcs?: string | undefined;
}

/** The limits, validated; null: the backend's default (idle, wall, grace) or none (memory, processes). */
export interface LimitsRequest {
  idleMs: number | null;
  wallMs: number | null;
  killGraceMs: number | null;
  /** --memory: the cap on the dispatch's cgroup, where the machine gives it one. */
  memoryBytes: number | null;
  /** --max-procs: the cap on its processes, where the machine gives it a cgroup. */
  maxProcs: number | null;
}

export const limits = {
  options: {
    idle: {
      type: "string",
      value: "<d>",
      description: "stop after this long without output",
      default: `${compactDuration(AGENT_DEFAULTS.idleMs)} for an agent CLI, ${compactDuration(execBackend.defaults.idleMs)} for exec`,
    },
    wall: {
      type: "string",
      value: "<d>",
      description: "stop after this long in all",
      default: `${compactDuration(AGENT_DEFAULTS.wallMs)} for an agent CLI, ${compactDuration(execBackend.defaults.wallMs)} for exec`,
    },
    "kill-grace": {
      type: "string",
      value: "<d>",
      description: "between SIGTERM and SIGKILL at the stop",
      default: compactDuration(SPEC_DEFAULTS.killGraceMs),
    },
    memory: {
      type: "string",
      value: "<size>",
      description: "cap on the memory of the agent and all it starts, e.g. 2G (where catherd gets a cgroup)",
      default: "none",
    },
    "max-procs": {
      type: "string",
      value: "<n>",
      description: "cap on the processes of the agent and all it starts (where catherd gets a cgroup)",
      integer: true,
      default: "none",
    },
  },
  validate(raw) {
    return {
      idleMs: raw.idle === undefined ? null : parseDuration("--idle", raw.idle),
      wallMs: raw.wall === undefined ? null : parseDuration("--wall", raw.wall),
      killGraceMs: raw.killGrace === undefined ? null : parseKillGrace(raw.killGrace),
      memoryBytes: raw.memory === undefined ? null : parseSize("--memory", raw.memory),
      maxProcs: raw.maxProcs === undefined ? null : parseMaxProcs(raw.maxProcs),
    };
  },
  toSpec: (part) => ({
    idleMs: part.idleMs ?? undefined,
    wallMs: part.wallMs ?? undefined,
    killGraceMs: part.killGraceMs ?? undefined,
    memoryBytes: part.memoryBytes,
    maxProcs: part.maxProcs,
  }),
  toLadder: ({ idleMs, wallMs, killGraceMs, memoryBytes, maxProcs }) => ({
    idleMs,
    wallMs,
    killGraceMs,
    memoryBytes,
    maxProcs,
  }),
  // A chain's attempts run under one set of limits; a follow-up turn takes its own flags.
  carry: ({ ladder }, to) =>
    ladder === null || to.kind === "follow-up"
      ? {}
      : {
          idleMs: ladder.request.idleMs,
          wallMs: ladder.request.wallMs,
          killGraceMs: ladder.request.killGraceMs,
          memoryBytes: ladder.request.memoryBytes,
          maxProcs: ladder.request.maxProcs,
        },
} satisfies Concern<RawLimitsInput, LimitsRequest>;

function parseKillGrace(text: string): number {
  if (text === "0" || text === "0s" || text === "0ms") return 0;
  return parseDuration("--kill-grace", text);
}

const PROCESSES = z
  .string()
  .regex(/^[0-9]{1,12}$/)
  .transform(Number)
  .pipe(z.number().int().min(8).max(4_194_304));

function parseMaxProcs(text: string): number {
  return checked(
    PROCESSES,
    text,
    () =>
      new CatherdError(
        "E_INPUT_INVALID",
        `--max-procs ${shownValue(text)}: it is a whole number of processes from 8 to 4194304`,
        { fix: "give a whole number from 8 (an agent CLI and its shell need a few)" },
      ),
  );
}
