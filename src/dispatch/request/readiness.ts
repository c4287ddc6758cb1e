import * as os from "node:os";
import type { Backend } from "../../backends/types.js";
import { CatherdError } from "../../domain/errors.js";
import { cleanMessage } from "../../domain/text/redact.js";
import { compareVersions, versionIn } from "../../domain/version.js";
import type { CliAsked, CliThere } from "../../engines/engine.js";
import type { Clock } from "../../infra/clock.js";
import { cachedReadiness, executableKey, rememberReadiness } from "../../infra/readiness-cache.js";
import { probeVersion } from "../../infra/version-probe.js";
import { notExecutableBecause, resolveExecutable } from "../../infra/which.js";

// Readiness at admission (specs/dispatch.md): a dispatch to a CLI that cannot work fails in milliseconds,
// not minutes later. The executable must answer `--version` within 5 s, and be no older than the oldest
// version whose stream format its backend module knows. `catherd doctor` shows the same checks.

/** How long a CLI's `--version` may take before the CLI counts as broken, on a machine with CPU to spare. */
export const READINESS_TIMEOUT_MS = 5_000;
/** The most an overloaded machine stretches it to. */
const MAX_STRETCH = 6;

/**
 * The deadline for `--version`: 5 s, stretched by how overloaded the machine is (its 1-minute load average
 * per core, when above 1), to at most 30 s. A node-based CLI that starts in a second takes ten on two
 * cores under a load of 20 (measured with gemini 0.61.0); a CLI that cannot work hangs whatever the load.
 */
export function readinessTimeoutMs(loadAverage: number, cores: number): number {
  const stretch = Math.min(MAX_STRETCH, Math.max(1, loadAverage / Math.max(1, cores)));
  return Math.round(READINESS_TIMEOUT_MS * stretch);
}

/** Lines of the CLI's own words kept in an E_BACKEND_BROKEN message. */
const WORDS_CHARS = 600;

export interface Readiness {
  /** The version the CLI named, or null (it named none, or it is not ready). */
  version: string | null;
  /** What it printed for `--version`, cleaned: its own words. */
  words: string;
  /** The answer came from the cache (the executable has not changed since it was asked). */
  cached: boolean;
  /** E_BACKEND_BROKEN or E_BACKEND_TOO_OLD, or null when the CLI is ready. */
  problem: CatherdError | null;
}

/**
 * Asks the CLI at `bin` for its version, from the cache under `home` when the executable is unchanged,
 * and judges it. Never throws: a problem is part of the answer (admission throws it, doctor shows it).
 */
export async function checkReadiness(
  backend: Backend,
  bin: string,
  home: string,
  clock: Clock,
): Promise<Readiness> {
  if (backend.versionArgs.length === 0) return { version: null, words: "", cached: false, problem: null };
  if (resolveExecutable(bin, process.env.PATH ?? "") === null) return missingHere(backend, bin);
  const key = executableKey(bin);
  const cached = key === null ? null : cachedReadiness(home, key);
  if (cached !== null) return judged(backend, bin, cached, true);
  const asked = `${bin} ${backend.versionArgs.join(" ")}`;
  const timeoutMs = readinessTimeoutMs(os.loadavg()[0] ?? 0, os.availableParallelism());
  const answer = await probeVersion(bin, backend.versionArgs, timeoutMs);
  const reinstall = `reinstall it (${backend.installHint}), or point --bin or ${backend.binEnv} at a working one`;
  if (answer.kind === "unstartable") {
    const words = cleanMessage(answer.error, WORDS_CHARS);
    return broken(`${backend.id}: ${bin} cannot be started: ${words}`, words, reinstall);
  }
  const words = cleanMessage(answer.output, WORDS_CHARS);
  if (answer.kind === "silent") {
    const said = words === "" ? "" : `; it printed: ${words}`;
    return broken(
      `${backend.id}: ${asked} did not answer within ${READINESS_TIMEOUT_MS / 1000} s${said}`,
      words,
      reinstall,
    );
  }
  if (answer.code !== 0 || answer.signal !== null) {
    const how = answer.signal === null ? `exit code ${answer.code}` : `signal ${answer.signal}`;
    const said = words === "" ? "" : `: ${words}`;
    return broken(`${backend.id}: ${asked} failed (${how})${said}`, words, reinstall);
  }
  const version = versionIn(words);
  if (key !== null)
    rememberReadiness(home, key, { version, words, checkedAt: clock.wallNow().toISOString() });
  return judged(backend, bin, { version, words }, false);
}

function broken(message: string, words: string, fix: string): Readiness {
  return {
    version: null,
    words,
    cached: false,
    problem: new CatherdError("E_BACKEND_BROKEN", message, { fix }),
  };
}

/** A CLI that answered: ready, unless it names a version older than its backend's minimum. */
function judged(
  backend: Backend,
  bin: string,
  { version, words }: { version: string | null; words: string },
  cached: boolean,
): Readiness {
  const min = backend.minVersion;
  if (version === null || min === null || compareVersions(version, min) >= 0) {
    return { version, words, cached, problem: null };
  }
  const problem = new CatherdError(
    "E_BACKEND_TOO_OLD",
    `${backend.id}: ${bin} is version ${version}; catherd reads the stream format of ${min} and later`,
    { fix: `${backend.installHint}@latest` },
  );
  return { version, words, cached, problem };
}

/** What an engine asks of `backend`'s CLI on its host: this host's `here` tried first, else its name. */
export function cliAsked(backend: Backend, here: string | null): CliAsked {
  return {
    id: backend.id,
    here,
    name: backend.defaultBin,
    versionArgs: backend.versionArgs,
    login: backend.login ?? null,
  };
}

/**
 * `backend`'s CLI as the engine found it on `host` (specs/placement.md, "Readiness on the host"), judged as
 * here: missing (E_BACKEND_MISSING), a `--version` that failed or did not end (E_BACKEND_BROKEN), too old
 * (E_BACKEND_TOO_OLD) — in the host's words, with a fix that names the host.
 */
export function readinessThere(backend: Backend, there: CliThere, host: string): Readiness {
  const install = `${backend.installHint} on ${host}`;
  if (there.path === null) {
    const problem = new CatherdError(
      "E_BACKEND_MISSING",
      `${backend.id}: ${backend.defaultBin} is not on ${host}: not at this host's path there, nor on its login shell's PATH`,
      { fix: `${install}, where its login shell's PATH finds it (~/.profile), ${PLACE_LOCALLY}` },
    );
    return { version: null, words: "", cached: false, problem };
  }
  const words = cleanMessage(there.version?.words ?? "", WORDS_CHARS);
  const asked = `${there.path} ${backend.versionArgs.join(" ")} on ${host}`;
  const said = words === "" ? "" : `: ${words}`;
  const fix = `reinstall it on ${host} (${backend.installHint}), ${PLACE_LOCALLY}`;
  if (there.version !== null && there.version.code === null) {
    return broken(`${backend.id}: ${asked} did not answer in time${said}`, words, fix);
  }
  if (there.version !== null && there.version.code !== 0) {
    return broken(`${backend.id}: ${asked} failed (exit code ${there.version.code})${said}`, words, fix);
  }
  const version = versionIn(words);
  const min = backend.minVersion;
  if (version === null || min === null || compareVersions(version, min) >= 0) {
    return { version, words, cached: false, problem: null };
  }
  const problem = new CatherdError(
    "E_BACKEND_TOO_OLD",
    `${backend.id}: ${there.path} on ${host} is version ${version}; catherd reads the stream format of ${min} and later`,
    { fix: `${backend.installHint}@latest on ${host}, ${PLACE_LOCALLY}` },
  );
  return { version, words, cached: false, problem };
}

/** The end of a fix for a CLI that is not ready where a dispatch is placed. */
const PLACE_LOCALLY = "or dispatch with --placement local";

/**
 * A CLI this host does not have (its request keeps the name as given when it is not found here: placed on
 * another host, that host's readiness answers for it instead): E_BACKEND_MISSING, with why.
 */
function missingHere(backend: Backend, bin: string): Readiness {
  const why = notExecutableBecause(bin, process.env.PATH ?? "");
  const problem = new CatherdError(
    "E_BACKEND_MISSING",
    `${backend.id}: cannot run ${JSON.stringify(bin)}: ${why}`,
    {
      fix: `install it, or point --bin or ${backend.binEnv} at it (catherd doctor)`,
    },
  );
  return { version: null, words: "", cached: false, problem };
}
