// @ts-check
// The Chromium the dashboard's browser tests and its bench drive through playwright-core: Debian's
// package (`apt-get install chromium`; .ci/run installs it), never a browser Playwright downloads.
import * as fs from "node:fs";

/**
 * Flags for a headless run on a machine whose network beyond loopback is closed: without the
 * background-networking ones Chromium's own connections are refused and slow it down; the page needs none.
 */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * CATHERD_CHROMIUM, else Debian's chromium; null when there is none.
 * @returns {string | null}
 */
export function findChromium() {
  for (const candidate of [process.env.CATHERD_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"]) {
    if (candidate !== undefined && candidate !== "" && fs.existsSync(candidate)) return candidate;
  }
  return null;
}
