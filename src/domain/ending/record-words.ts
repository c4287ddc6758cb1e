// A record in words, as every verb and the supervisor print it: pure functions of the record's fields.
import { formatDuration } from "../text/duration.js";

/**
 * When to come back, as people read it: the local time ("14:05") when it is within a day, else the local
 * date and time ("2026-12-01 14:05").
 */
export function comeBackAt(iso: string, nowMs: number): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const two = (n: number) => String(n).padStart(2, "0");
  const time = `${two(at.getHours())}:${two(at.getMinutes())}`;
  if (Math.abs(at.getTime() - nowMs) < 24 * 3_600_000) return time;
  return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${time}`;
}

/**
 * Why a dispatch did not end ok, in one line: "rate-limit, retry after 14:05 — Rate limit reached…",
 * "auth — invalid x-api-key". A record written before kinds existed shows its message alone.
 */
export function whyLine(
  error: { kind?: string | null | undefined; message: string; retryAfter?: string | null | undefined },
  nowMs: number,
): string {
  const retry = error.retryAfter == null ? "" : `, retry after ${comeBackAt(error.retryAfter, nowMs)}`;
  if (error.kind == null) return error.message;
  return `${error.kind}${retry}${error.message === "" ? "" : ` — ${error.message}`}`;
}

/**
 * A record's status with its exit reason where the reason adds something: "timeout (idle-timeout)",
 * "ok (after-final)", but "cancelled", "lost", "ok" when the reason says the same or "exited".
 */
export function statusWords(status: string, reason: string | null): string {
  if (reason === null || reason === status || reason === "exited") return status;
  return `${status} (${reason})`;
}

/**
 * The head of a record's line, without its spend: "fix-tests 20261129T081530Z-k3x9qa ok (exited) 42s";
 * a folder supervised by hand has no name: "(by hand) …".
 */
export function recordHeadline(r: {
  name?: string | null | undefined;
  dispatchId: string;
  status: string;
  reason: string | null;
  secs: number | null;
}): string {
  const secs = r.secs === null ? "" : ` ${formatDuration(r.secs * 1000)}`;
  return `${r.name ?? "(by hand)"} ${r.dispatchId} ${statusWords(r.status, r.reason)}${secs}`;
}
