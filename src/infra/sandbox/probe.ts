import { execFile } from "node:child_process";
import * as fs from "node:fs";
import type { SandboxedMode } from "../../domain/sandbox/sandbox.js";
import { resolveExecutable } from "../which.js";

// Whether the sandbox can run on this host (specs/sandbox.md, "Where it runs"): bubblewrap found, a user
// namespace it may create (a real sandbox started and ended, not a guess from sysctls), socat for the
// network bridge of `files+net`. Admission asks before anything is written; `doctor` prints every line.

/** One thing the sandbox needs, found or not, with the fix when not. */
export interface SandboxCheck {
  what: string;
  ok: boolean;
  detail: string;
  fix: string | null;
}

/** How long the trial sandbox may take: bubblewrap starts in a few milliseconds on an idle machine. */
const TRIAL_TIMEOUT_MS = 10_000;

/**
 * The bubblewrap options every sandbox uses that a trial must prove: user, PID and network namespaces, a
 * /proc of its own, no caps.
 */
export const TRIAL_ARGS = [
  "--ro-bind",
  "/",
  "/",
  "--unshare-user",
  "--unshare-pid",
  "--proc",
  "/proc",
  "--unshare-net",
  "--disable-userns",
  "--cap-drop",
  "ALL",
  "--",
  "true",
] as const;

function trial(bwrap: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(bwrap, [...TRIAL_ARGS], { timeout: TRIAL_TIMEOUT_MS }, (error, _stdout, stderr) => {
      if (error === null) resolve(null);
      else resolve(String(stderr).trim().split("\n").pop() || error.message);
    });
  });
}

/** Every check the sandbox `mode` needs on this host, in order; the first that fails is what to fix first. */
export async function sandboxChecks(
  mode: SandboxedMode,
  searchPath = process.env.PATH ?? "",
): Promise<SandboxCheck[]> {
  const checks: SandboxCheck[] = [];
  const bwrap = resolveExecutable("bwrap", searchPath);
  checks.push({
    what: "bubblewrap",
    ok: bwrap !== null,
    detail: bwrap ?? "bwrap is not on PATH",
    fix: bwrap === null ? "install bubblewrap (Debian: apt-get install bubblewrap)" : null,
  });
  if (bwrap !== null) {
    const failed = await trial(bwrap);
    checks.push({
      what: "user namespaces",
      ok: failed === null,
      detail: failed === null ? "a trial sandbox started and ended" : `a trial sandbox failed: ${failed}`,
      fix:
        failed === null
          ? null
          : "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu kernel.apparmor_restrict_unprivileged_userns=0)",
    });
  }
  if (mode === "files+net") {
    const socat = resolveExecutable("socat", searchPath);
    checks.push({
      what: "socat",
      ok: socat !== null,
      detail: socat ?? "socat is not on PATH (it bridges the sandbox's loopback to catherd's proxy)",
      fix: socat === null ? "install socat (Debian: apt-get install socat), or use --sandbox files" : null,
    });
  }
  return checks;
}

/** The first failed check, or null when the sandbox can run. */
export async function sandboxUnavailable(mode: SandboxedMode): Promise<SandboxCheck | null> {
  return (await sandboxChecks(mode)).find((check) => !check.ok) ?? null;
}

/**
 * Whether the kernel enables Landlock, and its ABI as the kernel's version implies it (the ABI itself is
 * only told by a system call Node does not make). Said by `doctor`; the sandbox does not depend on it.
 */
export function landlockState(): string {
  let lsm = "";
  try {
    lsm = fs.readFileSync("/sys/kernel/security/lsm", "utf8");
  } catch {
    return "unknown (/sys/kernel/security/lsm is not readable)";
  }
  if (!lsm.split(",").includes("landlock")) return "not enabled in this kernel";
  const [major = 0, minor = 0] = (
    fs.readFileSync("/proc/sys/kernel/osrelease", "utf8").match(/^(\d+)\.(\d+)/) ?? []
  )
    .slice(1)
    .map(Number);
  const version = major * 1000 + minor;
  const abi = [
    [6015, 7],
    [6012, 6],
    [6010, 5],
    [6007, 4],
    [6002, 3],
    [5019, 2],
    [5013, 1],
  ].find(([since]) => version >= (since as number))?.[1];
  return abi === undefined ? "enabled" : `enabled, ABI ${abi} by the kernel's version`;
}
