import * as fs from "node:fs";

/**
 * How long a wait gives up after unless told: 10 s. A deadline only decides how soon a failure is reported,
 * never whether something passes; a suite that runs beside heavy load raises it (`waitDeadlineMs`).
 */
let defaultTimeoutMs = 10_000;

/** Sets the deadline of every wait of this test process that names none (the fault matrix: 60 s). */
export function waitDeadlineMs(ms: number): void {
  defaultTimeoutMs = ms;
}

/** Polls `check` until it returns a value other than undefined, or throws after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined,
  timeoutMs = defaultTimeoutMs,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Polls `check` (it may be async) until it returns a value other than undefined; throws after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
  pollMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** Waits until a file exists and returns its text. */
export function waitForFile(file: string, timeoutMs = defaultTimeoutMs): Promise<string> {
  return waitFor(file, () => (fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined), timeoutMs);
}

/**
 * Waits until a file holds a complete first line and returns it (a shell's `echo $! > file` creates the
 * file before it writes: its mere existence says nothing of its content).
 */
export function waitForLine(file: string, timeoutMs = defaultTimeoutMs): Promise<string> {
  return waitFor(
    `a line in ${file}`,
    () => {
      const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
      const end = text.indexOf("\n");
      return end === -1 ? undefined : text.slice(0, end);
    },
    timeoutMs,
  );
}

/** Waits until a JSON file exists and parses. */
export function waitForJson<T = Record<string, unknown>>(
  file: string,
  timeoutMs = defaultTimeoutMs,
): Promise<T> {
  return waitFor(
    file,
    () => {
      try {
        return JSON.parse(fs.readFileSync(file, "utf8")) as T;
      } catch {
        return undefined;
      }
    },
    timeoutMs,
  );
}
