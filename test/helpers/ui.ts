import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import type { BrowserContext } from "playwright-core";
import { CHROMIUM_ARGS, findChromium } from "../../scripts/chromium.mjs";
import { CLI_MAIN, ROOT, tempDir } from "./folders.js";

// `catherd ui` as a user runs it (the built CLI, a real server on loopback), and a real Chromium driving
// it through playwright-core: Debian's chromium package, never a browser Playwright downloads. Every
// test closes both, even when it fails.

/** Where screenshots go: a folder git ignores, kept after the run as the tests' artifacts. */
export const ARTIFACTS = path.join(ROOT, "test-artifacts", "ui");

export const CHROMIUM = findChromium();
if (CHROMIUM === null) {
  console.warn(
    "no Chromium found (/usr/bin/chromium, or CATHERD_CHROMIUM): the dashboard's browser tests are skipped; apt-get install chromium",
  );
}

/**
 * A headless Chromium with a new empty profile. The flags keep it off the network entirely: this machine
 * refuses connections beyond loopback, and the page must need none.
 */
export async function launchBrowser(): Promise<BrowserContext> {
  const { chromium } = await import("playwright-core");
  return chromium.launchPersistentContext(tempDir("catherd-chromium-"), {
    executablePath: CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: CHROMIUM_ARGS,
  });
}

export interface RunningUi {
  child: ChildProcess;
  /** The address it printed, token and all. */
  url: string;
  origin: string;
  port: number;
  stderr(): string;
  /** Ctrl-C: resolves with its exit code once it ended (SIGKILL after a deadline). */
  stop(): Promise<number | null>;
}

const running = new Set<RunningUi>();

/** Starts `catherd ui --no-open` with `env`, and waits for the address it prints. */
export async function startUiServer(
  env: NodeJS.ProcessEnv,
  args: readonly string[] = [],
): Promise<RunningUi> {
  const child = spawn(process.execPath, [CLI_MAIN, "ui", "--no-open", ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`catherd ui printed no address in time: ${out}${err}`)),
      15_000,
    );
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /catherd ui: (http:\/\/\S+)\n/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1] as string);
      }
    });
    void exited.then((code) => reject(new Error(`catherd ui exited ${code}: ${out}${err}`)));
  });
  const parsed = new URL(url);
  const ui: RunningUi = {
    child,
    url,
    origin: parsed.origin,
    port: Number(parsed.port),
    stderr: () => err,
    async stop() {
      running.delete(ui);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  running.add(ui);
  return ui;
}

/** Stops every server a test left running. */
export async function stopAllUi(): Promise<void> {
  await Promise.all([...running].map((ui) => ui.stop()));
}

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request as a script (or an attacker) would send it: every header as given. */
export function rawRequest(
  port: number,
  pathname: string,
  {
    method = "GET",
    headers = {},
    body,
  }: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, path: pathname, method, headers: { Host: `127.0.0.1:${port}`, ...headers } },
      (res) => {
        let text = "";
        res.on("data", (d: Buffer) => {
          text += d.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${method} ${pathname}`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** The session cookie the token buys (as `name=value`). */
export async function sessionCookie(ui: RunningUi): Promise<string> {
  const url = new URL(ui.url);
  const answer = await rawRequest(ui.port, `${url.pathname}${url.search}`);
  const cookie = answer.headers["set-cookie"]?.[0];
  if (answer.status !== 303 || cookie === undefined)
    throw new Error(`no cookie for the token: ${answer.status}`);
  return cookie.split(";")[0] as string;
}

/** Saves a screenshot of the page as a test artifact. */
export async function screenshot(page: import("playwright-core").Page, name: string): Promise<string> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Waits until `expression` is true in the page. Not page.waitForFunction: that turns its predicate into a
 * function in the page, which the dashboard's CSP (no eval) refuses; an evaluation through the DevTools
 * protocol is not the page's script.
 */
export async function untilInPage(
  page: import("playwright-core").Page,
  expression: string,
  timeoutMs = 20_000,
) {
  const deadline = Date.now() + timeoutMs;
  while ((await page.evaluate(expression)) !== true) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
