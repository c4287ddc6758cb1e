import { CatherdError } from "../../domain/errors.js";
import { resolveExecutable } from "../../infra/which.js";
import type { CliAsked, PlaceCheck, PlaceReadiness } from "../engine.js";
import { NOT_PLACED_FIX, runSsh, sshError } from "./command.js";
import { type HostAnswer, readAnswer } from "./readiness-answer.js";
import { readinessScript, VERSION_TIMEOUT_S } from "./readiness-script.js";
import { unsharedError, withMarker } from "./shared.js";

// Readiness on a host (specs/placement.md, "Readiness on the host"): what `doctor --placement ssh:HOST`
// shows and what a dispatch placed there is refused by before admission, from one bounded `ssh HOST sh -s`
// running the readiness script. Checks in order — ssh here, the host answering, catherd's home shared,
// node, catherd — each with the host's words and a fix; the first that fails is the refusal. The CLIs'
// answers are returned as the host gave them, for the caller to judge by their backends.

/** The oldest node catherd runs on (package.json's engines). */
export const MIN_NODE_MAJOR = 20;
/** The bound on the call: a login, a login shell for PATH, then each `--version` within its own bound. */
export function readinessTimeoutMs(clis: number): number {
  return 20_000 + (clis + 1) * VERSION_TIMEOUT_S * 1000;
}

/** What a readiness look needs besides the host: catherd's home, the supervisor's paths here, the CLIs. */
export interface ReadinessRequest {
  home: string;
  supervisor: { node: string; program: string };
  clis: readonly CliAsked[];
}

/** Everything a dispatch placed on `host` needs, as the host says it. Never throws. */
export async function readinessOn(host: string, request: ReadinessRequest): Promise<PlaceReadiness> {
  const ssh = resolveExecutable("ssh", process.env.PATH ?? "");
  if (ssh === null) {
    const error = new CatherdError("E_ENGINE_MISSING", "ssh is not installed here (not found on PATH)", {
      fix: `install OpenSSH's client on this host (Debian: apt-get install openssh-client), ${NOT_PLACED_FIX}`,
    });
    return { host, checks: [failedCheck("ssh here", error)], problem: error, clis: [] };
  }
  const here: Judged = { what: "ssh here", ok: true, detail: `ssh at ${ssh}`, fix: null };
  return withMarker(request.home, async (marker) => {
    const result = await runSsh(host, "sh -s", {
      input: readinessScript({ marker, supervisor: request.supervisor, clis: request.clis }),
      timeoutMs: readinessTimeoutMs(request.clis.length),
    });
    if (!result.ok)
      return unanswered(host, here, sshError(result, host, `ask ${host} whether it can take a dispatch`));
    const read = readAnswer(
      result.stdout,
      request.clis.map((c) => c.id),
    );
    if (read.kind === "garbled") {
      const error = new CatherdError("E_ENGINE_REFUSED", `${host}'s answer cannot be read: ${read.why}`, {
        fix: `check that ssh ${host} sh -s runs a POSIX shell there, and that nothing it starts prints lines of its own beginning with catherd-ready`,
      });
      return unanswered(host, here, error);
    }
    const checks: Judged[] = [
      here,
      answered(host, read.answer),
      ...hostChecks(host, request.home, marker.path, read.answer),
    ];
    return {
      host,
      checks: checks.map(({ error: _error, ...check }) => check),
      problem: checks.find((c) => !c.ok)?.error ?? null,
      clis: read.answer.clis,
    };
  });
}

/** A host that gave no answer to read: the checks up to it, its failure the refusal, no CLI. */
function unanswered(host: string, here: PlaceCheck, error: CatherdError): PlaceReadiness {
  return { host, checks: [here, failedCheck("host answers", error)], problem: error, clis: [] };
}

/** A check and, when it failed, the refusal it stands for. */
type Judged = PlaceCheck & { error?: CatherdError };

function failedCheck(what: string, error: CatherdError): PlaceCheck {
  return { what, ok: false, detail: error.message, fix: error.fix ?? null };
}

function judgedFailure(what: string, error: CatherdError): Judged {
  return { ...failedCheck(what, error), error };
}

function answered(host: string, answer: HostAnswer): Judged {
  return {
    what: "host answers",
    ok: true,
    detail: `${host} answered (BatchMode) as ${answer.name}`,
    fix: null,
  };
}

/** The shared home, node and catherd, as the host answered. */
function hostChecks(host: string, home: string, marker: string, answer: HostAnswer): Judged[] {
  const shared: Judged = answer.shared
    ? { what: "shared home", ok: true, detail: `${host} sees catherd's home at ${home}`, fix: null }
    : judgedFailure("shared home", unsharedError(host, home, marker, "could not be read there"));
  return [shared, nodeCheck(host, answer.node), catherdCheck(host, answer.catherd)];
}

/** How a path was found there, in words. */
function viaWords(via: "here" | "PATH"): string {
  return via === "here" ? "the same path as here" : "on the login shell's PATH";
}

function nodeCheck(host: string, node: HostAnswer["node"]): Judged {
  const install = `install node ${MIN_NODE_MAJOR} or later on ${host} where its login shell's PATH finds it (~/.profile), ${NOT_PLACED_FIX}`;
  if (node === null) {
    const error = new CatherdError(
      "E_ENGINE_UNCONFIGURED",
      `node is not on the PATH of ${host}'s login shell`,
      {
        fix: install,
      },
    );
    return judgedFailure("node", error);
  }
  const major = Number(/^v?(\d+)\./.exec(node.version)?.[1] ?? Number.NaN);
  if (!(major >= MIN_NODE_MAJOR)) {
    const error = new CatherdError(
      "E_ENGINE_UNCONFIGURED",
      `node on ${host} is ${node.version} at ${node.path}; catherd needs ${MIN_NODE_MAJOR} or later`,
      { fix: install },
    );
    return judgedFailure("node", error);
  }
  return {
    what: "node",
    ok: true,
    detail: `${node.version} at ${node.path} (${viaWords(node.via)})`,
    fix: null,
  };
}

function catherdCheck(host: string, catherd: HostAnswer["catherd"]): Judged {
  if (catherd === null) {
    const error = new CatherdError(
      "E_ENGINE_UNCONFIGURED",
      `catherd is not on ${host}: not at this host's path there, nor on its login shell's PATH`,
      {
        fix: `put catherd on the PATH of ${host}'s login shell (npm link in a clone there), or this host's install on storage ${host} mounts at the same path, ${NOT_PLACED_FIX}`,
      },
    );
    return judgedFailure("catherd", error);
  }
  return { what: "catherd", ok: true, detail: `${catherd.path} (${viaWords(catherd.via)})`, fix: null };
}
