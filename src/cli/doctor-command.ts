import * as os from "node:os";
import { allBackends, backendNamed } from "../backends/backend-registry.js";
import type { Backend } from "../backends/types.js";
import { placedReadiness } from "../dispatch/place-readiness.js";
import { checkedParts, PLACEMENT_SPELLINGS } from "../dispatch/request/placement.js";
import { checkReadiness, readinessTimeoutMs } from "../dispatch/request/readiness.js";
import { CatherdError } from "../domain/errors.js";
import type { SandboxedMode } from "../domain/sandbox/sandbox.js";
import { BACKEND_IDS, type BackendId } from "../domain/vocab.js";
import { systemClock } from "../infra/clock.js";
import { catherdHome } from "../infra/paths.js";
import type { SandboxCheck } from "../infra/sandbox/probe.js";
import { notExecutableBecause, resolveExecutable } from "../infra/which.js";
import { type Command, stringOption } from "./command-io.js";
import {
  type PlacementReport,
  placementReady,
  placementReport,
  renderPlacement,
} from "./doctor-placement.js";
import { cell, paint } from "./render.js";

export interface BackendCheck {
  backend: BackendId;
  found: boolean;
  path: string | null;
  /** Where the path came from: the CATHERD_<B>_BIN variable or PATH. */
  via: string | null;
  version: string | null;
  /** The oldest version catherd reads; null when there is none. */
  minVersion: string | null;
  /** Found and ready: it answers --version in time and is not too old (what admission checks). */
  ready: boolean;
  /** Why it is not ready (E_BACKEND_MISSING, E_BACKEND_BROKEN, E_BACKEND_TOO_OLD), or null. */
  problem: { code: string; message: string } | null;
  fix: string | null;
  /**
   * For a CLI catherd talks to over a session protocol of its own (`--steerable`): whether the CLI starts
   * it and answers its handshake. Null: the CLI is not ready, or has no such protocol.
   */
  steerable: { ok: boolean; detail: string; fix: string | null } | null;
}

/** Whether the sandbox (`--sandbox`, specs/sandbox.md) can run here, check by check. */
export interface SandboxReport {
  /** Every check of `files+net` (bubblewrap, user namespaces, socat), in order. */
  checks: SandboxCheck[];
  /** The modes that can run here. */
  modes: SandboxedMode[];
  landlock: string;
}

/** doctor's data: this host's CLIs and sandbox; or, with --placement on another host, that host's report. */
export type DoctorData = { backends: BackendCheck[]; fence: SandboxReport } | { placement: PlacementReport };

export const doctorCommand: Command<DoctorData> = {
  name: "doctor",
  synopsis: "[<backend>…]",
  positionals: "many",
  summary:
    "Which agent CLIs catherd can run here: found or not (and where), their versions, whether each is " +
    "ready as a dispatch checks it (answers --version within 5 s, not older than catherd reads), whether it " +
    "answers the handshake of the session protocol --steerable talks to it over, and how to fix what is not; " +
    "and whether the sandbox (--sandbox) can run here. With --placement ssh:HOST, the same of HOST over one " +
    "ssh call: ssh here, HOST answering, catherd's home shared, node and catherd there, and each CLI on " +
    "its login PATH with its version and its login. Exit 3 when a backend you name (or the host) is " +
    "missing or not ready.",
  json: "{backends: [{backend, found, path, via, version, minVersion, ready, problem, fix, steerable: {ok, detail, fix} | null}…], fence: {checks: [{what, ok, detail, fix}…], modes, landlock}} | with --placement ssh:HOST {placement: {placement, host, checks: [{what, ok, detail, fix}…], backends: [{backend, found, path, via, version, minVersion, ready, problem, fix, login: {ok, detail, fix} | null}…]}}",
  options: {
    placement: {
      type: "string",
      value: "<placement>",
      description: `check where a dispatch so placed runs its CLI: ${PLACEMENT_SPELLINGS.join(", ")} (default: here)`,
    },
  },
  async handler(input) {
    const named = input.positionals.map((name) => {
      const backend = backendNamed(name);
      if (backend === null) {
        throw new CatherdError("E_INPUT_INVALID", `unknown backend ${JSON.stringify(name)}`, {
          fix: `name one of ${BACKEND_IDS.join(", ")}`,
        });
      }
      return backend;
    });
    const asked = named.length > 0 ? named : allBackends();
    const targets = asked.filter((b) => b.command === "cli");
    const placement = stringOption(input, "placement");
    const placed = placement === undefined ? null : await placedDoctor(placement, targets);
    if (placed !== null) {
      return {
        data: { placement: placed },
        text: renderPlacement(placed),
        exitCode: placementReady(placed, named.length > 0) ? 0 : 3,
      };
    }
    const [backends, sandbox] = await Promise.all([
      Promise.all(targets.map((b) => check(b, process.env))),
      sandboxReport(),
    ]);
    const notReady = named.length > 0 && backends.some((b) => !b.ready);
    // A backend that runs the command given after -- has nothing installed to check: said, not skipped.
    const givenCommands = named.filter((b) => b.command !== "cli").map((b) => NOTHING_TO_CHECK(b.id));
    return {
      data: { backends, fence: sandbox },
      text: [render(backends), ...givenCommands, renderSandbox(sandbox)].filter((t) => t !== "").join("\n"),
      exitCode: notReady ? 3 : 0,
    };
  },
};

/**
 * The report of the host `value` places a dispatch on, checked as dispatch checks it (hostile hosts refused
 * before ssh runs); null for a placement whose CLIs are this host's (local, an engine without readiness).
 */
async function placedDoctor(value: string, targets: readonly Backend[]): Promise<PlacementReport | null> {
  const parts = checkedParts("--placement", value, `give --placement ${PLACEMENT_SPELLINGS.join(", ")}`);
  if (parts.engine === null) return null;
  const wanted = targets.map((backend) => ({ backend, here: binHere(backend, process.env) }));
  const found = await placedReadiness(parts.engine, { home: catherdHome(), target: parts.target }, wanted);
  return found === null ? null : placementReport(value, found);
}

/** The CLI's executable here, as a dispatch resolves it without --bin: its variable, else its name on PATH. */
function binHere(backend: Backend, env: NodeJS.ProcessEnv): string | null {
  const fromEnv = env[backend.binEnv];
  const wanted = fromEnv !== undefined && fromEnv !== "" ? fromEnv : backend.defaultBin;
  return resolveExecutable(wanted, env.PATH ?? "");
}

async function check(backend: Backend, env: NodeJS.ProcessEnv): Promise<BackendCheck> {
  const fromEnv = env[backend.binEnv];
  const wanted = fromEnv !== undefined && fromEnv !== "" ? fromEnv : backend.defaultBin;
  const found = binHere(backend, env);
  const via = fromEnv !== undefined && fromEnv !== "" ? backend.binEnv : "PATH";
  const minVersion = backend.minVersion;
  if (found === null) {
    const fix =
      via === "PATH"
        ? `${backend.installHint}, or set ${backend.binEnv}`
        : `${backend.binEnv} names ${wanted}, which is not an executable`;
    const problem = {
      code: "E_BACKEND_MISSING",
      message: `${backend.id}: ${notExecutableBecause(wanted, env.PATH ?? "")}`,
    };
    return {
      backend: backend.id,
      found: false,
      path: null,
      via: null,
      version: null,
      minVersion,
      ready: false,
      problem,
      fix,
      steerable: null,
    };
  }
  const ready = await checkReadiness(backend, found, catherdHome(env), systemClock);
  const steerable = ready.problem === null ? await checkSession(backend, found) : null;
  return {
    backend: backend.id,
    found: true,
    path: found,
    via,
    version: ready.version,
    minVersion,
    ready: ready.problem === null,
    problem: ready.problem === null ? null : { code: ready.problem.code, message: ready.problem.message },
    fix: ready.problem?.fix ?? null,
    steerable,
  };
}

/** The probe of the backend's session protocol, where it has one (SteerProtocol.probe). */
async function checkSession(backend: Backend, bin: string): Promise<BackendCheck["steerable"]> {
  const probe = backend.steer?.probe;
  if (probe === undefined) return null;
  const { probeSession } = await import("../infra/session-probe.js");
  const timeoutMs = readinessTimeoutMs(os.loadavg()[0] ?? 0, os.availableParallelism());
  const answer = await probeSession(bin, probe, timeoutMs);
  const fix = answer.ok
    ? null
    : `plain dispatches are unaffected; for --steerable, ${backend.installHint} at a version catherd reads (${backend.minVersion ?? "any"} or later)`;
  return { ...answer, fix };
}

async function sandboxReport(): Promise<SandboxReport> {
  const { sandboxChecks, landlockState } = await import("../infra/sandbox/probe.js");
  const checks = await sandboxChecks("files+net");
  const filesOk = checks.filter((c) => c.what !== "socat").every((c) => c.ok);
  const modes: SandboxedMode[] = filesOk
    ? checks.every((c) => c.ok)
      ? ["files", "files+net"]
      : ["files"]
    : [];
  return { checks, modes, landlock: landlockState() };
}

function renderSandbox(sandbox: SandboxReport): string {
  const lines = ["sandbox (--sandbox)"];
  for (const c of sandbox.checks) {
    lines.push(
      `${c.ok ? paint("ok     ", "green") : paint("missing", "red")} ${cell(c.what, 16)} ${c.detail}`,
    );
    if (c.fix !== null) lines.push(`        fix: ${c.fix}`);
  }
  lines.push(`        Landlock: ${sandbox.landlock} (the sandbox does not depend on it)`);
  lines.push(
    sandbox.modes.length === 0
      ? "        the sandbox cannot run here: agents run with every permission of this account"
      : `        the sandbox can run here (${sandbox.modes.join(", ")}): dispatch with --sandbox ${sandbox.modes.at(-1)} (or --run-sandbox for a whole run) to keep agents off your secrets${sandbox.modes.includes("files+net") ? " and the network" : ""}`,
  );
  return `${lines.join("\n")}\n`;
}

function renderSteerable(steerable: BackendCheck["steerable"]): string[] {
  if (steerable === null) return [];
  const said = `        --steerable: ${steerable.ok ? "ok" : "cannot start"} (${steerable.detail})`;
  return steerable.fix === null ? [said] : [said, `        fix: ${steerable.fix}`];
}

const NOTHING_TO_CHECK = (id: BackendId): string =>
  `${paint("ok     ", "green")} ${cell(id, 11)} runs the command given after --: nothing to install or check`;

function render(checks: BackendCheck[]): string {
  if (checks.length === 0) return "";
  const lines = checks.map((c) => {
    const mark = !c.found
      ? paint("missing", "red")
      : c.ready
        ? paint("ok     ", "green")
        : paint(c.problem?.code === "E_BACKEND_TOO_OLD" ? "too old" : "broken ", "red");
    const version = c.found ? (c.version ?? "version unknown") : "";
    const head = `${mark} ${cell(c.backend, 11)} ${version}`.trimEnd();
    const where = c.found ? [`        at ${c.path} (via ${c.via})`] : [];
    const problem = c.found && c.problem !== null ? [`        ${c.problem.message}`] : [];
    const fix = c.fix === null ? [] : [`        fix: ${c.fix}`];
    return [head, ...where, ...problem, ...fix, ...renderSteerable(c.steerable)].join("\n");
  });
  return `${lines.join("\n")}\n`;
}
