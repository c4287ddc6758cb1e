import type { Backend } from "../backends/types.js";
import type { CliJudged, PlacedReadiness } from "../dispatch/place-readiness.js";
import type { PlaceCheck } from "../engines/engine.js";
import { cell, paint } from "./render.js";

// `doctor --placement` for an engine that starts the supervisor on another host (specs/placement.md,
// "Readiness on the host"): the host's checks and each CLI as the host has it, with its login, as data
// and as lines, one per thing with its fix.

/** A CLI on the placement's host: found, version, readiness as a dispatch judges it, its login. */
export interface HostCliCheck {
  backend: string;
  found: boolean;
  path: string | null;
  /** `here`: at this host's path there (a shared install); `PATH`: on the login shell's PATH there. */
  via: "here" | "PATH" | null;
  version: string | null;
  minVersion: string | null;
  ready: boolean;
  problem: { code: string; message: string } | null;
  fix: string | null;
  /** Its login there (a file, a variable's name), or none found; null: it has none to check. */
  login: { ok: boolean; detail: string; fix: string | null } | null;
}

/** What `doctor --placement ENGINE:TARGET` reports of the host. */
export interface PlacementReport {
  placement: string;
  host: string;
  checks: PlaceCheck[];
  backends: HostCliCheck[];
}

/** The report of `placement` from what its host said. */
export function placementReport(placement: string, found: PlacedReadiness): PlacementReport {
  return {
    placement,
    host: found.report.host,
    checks: found.report.checks,
    backends: found.clis.map((c) => hostCliCheck(c, found.report.host)),
  };
}

/** Whether everything the host was asked is ready: its checks, and the CLIs named (with their logins). */
export function placementReady(report: PlacementReport, named: boolean): boolean {
  if (report.checks.some((c) => !c.ok)) return false;
  return !named || report.backends.every((b) => b.ready && (b.login === null || b.login.ok));
}

function hostCliCheck(c: CliJudged, host: string): HostCliCheck {
  const problem = c.judged.problem;
  return {
    backend: c.backend.id,
    found: c.there.path !== null,
    path: c.there.path,
    via: c.there.via,
    version: c.judged.version,
    minVersion: c.backend.minVersion,
    ready: problem === null,
    problem: problem === null ? null : { code: problem.code, message: problem.message },
    fix: problem?.fix ?? null,
    login: loginCheck(c.backend, c.there.login, host),
  };
}

/** The login found there, or the fix: log the CLI in there, or give a key with --pass-env. */
function loginCheck(
  backend: Backend,
  login: CliJudged["there"]["login"],
  host: string,
): HostCliCheck["login"] {
  const places = backend.login;
  if (places === undefined) return null;
  if (login !== null) {
    const detail =
      login.kind === "file" ? `logged in: ${login.where}` : `logged in: ${login.where} is set there`;
    return { ok: true, detail, fix: null };
  }
  const files = places.files.map((f) => `~/${f.underHome} (or in $${f.variable})`).join(", ");
  return {
    ok: false,
    detail: `no login on ${host}: no ${files}, and none of ${places.variables.join(", ")} set in its ssh session`,
    fix: `log ${backend.defaultBin} in on ${host} (ssh -t ${host} ${backend.defaultBin}, its own login), or give a key with --pass-env <NAME>`,
  };
}

const MARK = {
  ok: () => paint("ok     ", "green"),
  no: () => paint("missing", "red"),
};

/** The report as lines: the host's checks, then each CLI with where, what is wrong and its fix. */
export function renderPlacement(report: PlacementReport): string {
  const lines = [`${report.placement} (${report.host})`];
  for (const c of report.checks) {
    lines.push(`${c.ok ? MARK.ok() : MARK.no()} ${cell(c.what, 14)} ${c.detail}`);
    if (c.fix !== null) lines.push(`        fix: ${c.fix}`);
  }
  for (const b of report.backends) lines.push(...cliLines(b));
  return `${lines.join("\n")}\n`;
}

function cliLines(b: HostCliCheck): string[] {
  const mark = !b.found
    ? MARK.no()
    : b.ready
      ? MARK.ok()
      : paint(b.problem?.code === "E_BACKEND_TOO_OLD" ? "too old" : "broken ", "red");
  const head = `${mark} ${cell(b.backend, 14)} ${b.found ? (b.version ?? "version unknown") : ""}`.trimEnd();
  const where =
    b.path === null ? [] : [`        at ${b.path} (${b.via === "here" ? "this host's path" : "login PATH"})`];
  const problem = b.problem === null ? [] : [`        ${b.problem.message}`];
  const fix = b.fix === null ? [] : [`        fix: ${b.fix}`];
  const login =
    b.login === null
      ? []
      : [
          `        ${b.login.ok ? "" : `${paint("not logged in", "red")}: `}${b.login.detail}`,
          ...(b.login.fix === null ? [] : [`        fix: ${b.login.fix}`]),
        ];
  return [head, ...where, ...problem, ...fix, ...login];
}
