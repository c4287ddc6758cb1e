import * as fs from "node:fs";
import type { Backend } from "../../backends/types.js";
import type { AdmitFile, RecordFile, SpecFile } from "../../domain/schemas.js";
import type { AccessLevel } from "../../domain/vocab.js";
import type { AgentRequest, RawAgentInput } from "./agent.js";
import type { Recorded } from "./concern.js";

// What a successor takes of the request's core (agent.ts; specs/dispatch.md, "What a successor takes"):
// a chain's next attempt the recorded attempt's values, as its carry; a follow-up its turn's, given as
// flags, so that they are checked as a new dispatch's are.

/**
 * A chain's next attempt's core: the recorded attempt's name, run, folder, `--owns`, access and `--env`
 * values; on another backend, what only means something to the first — `--effort`, `--thread`, the
 * arguments after `--` — is left out. Its backend, model and executable are its step's (the hand-over's).
 */
export function nextAttemptCore({ admit, spec, ladder }: Recorded, backend: Backend): Partial<AgentRequest> {
  if (admit == null || ladder == null) return {};
  const asked = ladder.request;
  const sameBackend = backend.id === ladder.rung.backend;
  return {
    name: admit.name,
    run: admit.run,
    cwd: asked.cwd,
    owns: admit.owns,
    effort: sameBackend ? asked.effort : null,
    access: asked.access,
    env: envOf(asked.envNames, spec),
    thread: sameBackend ? asked.thread : null,
    extraArgs: sameBackend ? asked.extraArgs : [],
  };
}

/** The values of the chain's `--env` names, as the recorded attempt's spec.json holds them. */
function envOf(names: readonly string[], spec: SpecFile | null): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = spec?.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** The turn a follow-up continues, as its folder holds it. */
export interface TurnRecorded {
  name: string;
  admit: AdmitFile;
  spec: SpecFile;
  record: RecordFile;
  backend: Backend;
  /** The access its thread started with (admit.json's, else its ladder's); null: the CLI's own. */
  access: AccessLevel | null;
}

/**
 * The core flags of a follow-up: what its turn fixes — backend, name, folder, access, thread — and what
 * it repeats unless given anew — model, effort, executable, `--env` (given, a value wins name by name).
 */
export function flagsOfTurn<Raw extends RawAgentInput>(raw: Raw, turn: TurnRecorded): Raw {
  const { admit, spec, record, backend, access } = turn;
  return {
    ...raw,
    env: [...repeatedEnv(backend, spec, access), ...(raw.env ?? [])],
    backend: backend.id,
    name: turn.name,
    cwd: admit.cwd,
    model: raw.model ?? admit.model ?? undefined,
    effort: raw.effort ?? admit.effort ?? admit.ladder?.request.effort ?? undefined,
    access: access ?? undefined,
    thread: record.thread ?? undefined,
    // The thread lives in that CLI's own store: the same executable continues it.
    bin: raw.bin ?? cliBinOf(backend, spec),
  };
}

/** The CLI the turn ran (the same executable continues its thread); undefined when it is gone. */
function cliBinOf(backend: Backend, spec: SpecFile): string | undefined {
  if (spec.cmd === undefined) return undefined;
  const bin = backend.cliBin?.(spec.cmd, spec.args) ?? spec.cmd;
  return fs.existsSync(bin) ? bin : undefined;
}

/**
 * The turn's `--env` values, as its spec.json holds them (less what the backend's plan sets by itself):
 * given again, as a chain's next attempt is given them — the CLI's own home or endpoint is often one, and
 * its thread lives there.
 */
function repeatedEnv(backend: Backend, spec: SpecFile, access: AccessLevel | null): string[] {
  const planned = backend.plan({
    bin: spec.cmd,
    briefPath: null,
    model: null,
    effort: null,
    access,
    thread: null,
    extraArgs: [],
    maxCostUsd: null,
  }).env;
  return Object.entries(spec.env).flatMap(([k, v]) => (planned[k] === v ? [] : [`${k}=${v}`]));
}
