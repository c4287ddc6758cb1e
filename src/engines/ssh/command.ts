import { execFile } from "node:child_process";
import { CatherdError } from "../../domain/errors.js";
import { checkHost } from "./host.js";

// One way to run ssh (specs/placement.md, "SSH"): a hook into the outside, so every call has a bound and
// its failure is a value with ssh's own words. HOST goes through the user's ssh configuration as given
// (aliases, ports, keys, ProxyJump); catherd adds only BatchMode (a detached supervisor cannot type a
// password) and a connect timeout. The host is checked again here and given after `--`: nothing after
// it is read as an ssh option.

/** The end of a fix for a host that cannot take a dispatch: place it elsewhere, or forget the run's. */
export const NOT_PLACED_FIX =
  "or dispatch with --placement local (--run-placement none forgets a run's remembered placement)";

/** The bound on one ssh call that asks a question (is the folder shared, does the supervisor run). */
export const SSH_ASK_TIMEOUT_MS = 15_000;
/** How long ssh may take to connect: inside the call's bound. */
const CONNECT_TIMEOUT_S = 10;
const MAX_BUFFER = 4 * 1024 * 1024;
/** ssh's own failure (no connection, no login): the remote command's codes are its own. */
export const SSH_FAILED = 255;
/**
 * What OpenSSH says when the connection never came up (so no remote command ran): no route, refused,
 * timed out, a name that does not resolve, sshd closing before its banner.
 */
const NO_CONNECTION =
  /connect to host|Could not resolve hostname|kex_exchange_identification|timed out during banner exchange|Connection (?:refused|timed out|reset)/i;

/**
 * The bound of an ssh call: `CATHERD_TEST_ONLY_SSH_TIMEOUT_MS` when set, a test hook never to be set
 * around real work (specs/placement.md, "Tests on the rig": a host that never answers, in a test's
 * milliseconds), else `givenMs`.
 */
export function sshBoundMs(givenMs: number, env: NodeJS.ProcessEnv = process.env): number {
  const forced = Number(env.CATHERD_TEST_ONLY_SSH_TIMEOUT_MS);
  return Number.isSafeInteger(forced) && forced > 0 ? forced : givenMs;
}

export type SshResult =
  | { ok: true; stdout: string; stderr: string }
  | {
      ok: false;
      /**
       * `missing`: no ssh here; `timeout`: no answer in time; `unreachable`: ssh could not connect (255,
       * before any remote command ran); `login`: ssh itself failed otherwise (255: no key, a host key
       * refused); `refused`: the remote command failed.
       */
      failure: "missing" | "timeout" | "unreachable" | "login" | "refused";
      stdout: string;
      words: string;
      exitCode: number | null;
    };

/** Runs `remote` (a command line for the remote user's shell) on `host`, `input` on its stdin. Never throws. */
export function runSsh(
  host: string,
  remote: string,
  options: { timeoutMs?: number; input?: string } = {},
): Promise<SshResult> {
  const timeoutMs = sshBoundMs(options.timeoutMs ?? SSH_ASK_TIMEOUT_MS);
  const args = [
    "-o",
    "BatchMode=yes",
    "-o",
    `ConnectTimeout=${CONNECT_TIMEOUT_S}`,
    "--",
    checkHost(host),
    remote,
  ];
  return new Promise((resolve) => {
    const child = execFile(
      "ssh",
      args,
      { timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: MAX_BUFFER, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve({ ok: true, stdout, stderr });
          return;
        }
        resolve(failed(error, { host, stdout, stderr, timeoutMs }));
      },
    );
    child.stdin?.on("error", () => {});
    child.stdin?.end(options.input ?? "");
  });
}

function failed(
  error: Error & { code?: unknown; killed?: boolean },
  o: { host: string; stdout: string; stderr: string; timeoutMs: number },
): SshResult & { ok: false } {
  const exitCode = typeof error.code === "number" ? error.code : null;
  const failure =
    error.code === "ENOENT"
      ? "missing"
      : error.killed
        ? "timeout"
        : exitCode === SSH_FAILED
          ? NO_CONNECTION.test(o.stderr)
            ? "unreachable"
            : "login"
          : "refused";
  const said = lastLines(o.stderr);
  const words =
    failure === "missing"
      ? "ssh is not installed here (not found on PATH)"
      : failure === "timeout"
        ? `ssh ${o.host} did not answer within ${o.timeoutMs} ms`
        : said || `ssh ${o.host} failed with exit code ${exitCode}`;
  return { ok: false, failure, stdout: o.stdout, words, exitCode };
}

/**
 * The last lines of what ssh or the remote command said, bounded: the words a message quotes. ssh ends its
 * own lines with CR LF: no carriage return is left inside the words.
 */
function lastLines(text: string): string {
  return text.trim().split(/\r?\n/).slice(-3).join("; ").slice(0, 500);
}

/** A failed ssh call as the one user-facing error: what was asked, ssh's words, a fix. */
export function sshError(result: SshResult & { ok: false }, host: string, asked: string): CatherdError {
  switch (result.failure) {
    case "missing":
      return new CatherdError("E_ENGINE_MISSING", `cannot ${asked}: ${result.words}`, {
        fix: `install OpenSSH's client on this host (Debian: apt-get install openssh-client), ${NOT_PLACED_FIX}`,
      });
    case "timeout":
      return new CatherdError("E_ENGINE_TIMEOUT", `cannot ${asked}: ${result.words}`, {
        fix: `check that ssh ${host} true answers from this host, then try again`,
      });
    case "unreachable":
      return new CatherdError(
        "E_ENGINE_UNREACHABLE",
        `cannot ${asked}: ${host} does not answer: ${result.words}`,
        {
          fix: `check that ${host} is up and ssh ${host} true answers from this host, ${NOT_PLACED_FIX}`,
        },
      );
    case "login":
      return new CatherdError(
        "E_ENGINE_UNCONFIGURED",
        `cannot ${asked}: ssh ${host} failed: ${result.words}`,
        {
          fix: `make ssh ${host} true work without a password (a key, your ssh configuration), ${NOT_PLACED_FIX}`,
        },
      );
    case "refused":
      return new CatherdError("E_ENGINE_REFUSED", `cannot ${asked}: ${host} says: ${result.words}`, {
        fix: `see what ${host} said above, ${NOT_PLACED_FIX}`,
      });
  }
}
