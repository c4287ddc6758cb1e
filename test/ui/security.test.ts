import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispatchedOf, fakeDispatchArgs, isolatedHome, runCli } from "../helpers/cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { type RunningUi, rawRequest, sessionCookie, startUiServer, stopAllUi } from "../helpers/ui.js";
import { waitFor, waitForFile } from "../helpers/wait.js";

// catherd ui's guard with raw HTTP requests, as a script or a hostile page would send them
// (specs/ui.md, "Security"): no token, a wrong one, a foreign Host, a change without the cookie, with a
// foreign Origin or without JSON — each refused, and nothing cancelled.

let ui: RunningUi;
let cookie: string;
let env: NodeJS.ProcessEnv;
let live: { dispatchId: string; dir: string };

beforeAll(async () => {
  ({ env } = isolatedHome());
  const ready = path.join(tempDir(), "ready");
  const scenario = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(scenario, JSON.stringify({ steps: [{ touch: ready }, { hang: true }] }));
  live = dispatchedOf(await runCli(fakeDispatchArgs(scenario, ["--name", "victim"]), { env }));
  await waitForFile(ready);
  ui = await startUiServer(env);
  cookie = await sessionCookie(ui);
});

afterAll(async () => {
  await stopAllUi();
  await runCli(["cancel", "victim", "--wait"], { env });
  expect(reapAll([live.dispatchId]), "processes left running").toBe(0);
});

const cancelPath = () => `/api/runs/default/dispatches/${live.dispatchId}/cancel`;

describe("catherd ui's guard", () => {
  it("prints one loopback address with a token, and answers nothing without it", async () => {
    expect(ui.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{20,}$/);
    for (const p of [
      "/",
      "/api/runs",
      "/api/runs/default",
      "/assets/app.js",
      "/api/events",
      "/runs/default",
    ]) {
      const answer = await rawRequest(ui.port, p);
      expect(answer.status, p).toBe(401);
      expect(answer.body).not.toContain("victim");
    }
    expect((await rawRequest(ui.port, "/?token=not-the-token")).status).toBe(401);
  });

  it("exchanges the token for an HttpOnly, SameSite=Strict cookie and sends the browser on without it", async () => {
    const url = new URL(ui.url);
    const answer = await rawRequest(ui.port, `/runs/default${url.search}&x=1`);
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe("/runs/default?x=1");
    expect(answer.headers["set-cookie"]?.[0]).toMatch(
      new RegExp(`^catherd_ui_${ui.port}=[A-Za-z0-9_-]+; HttpOnly; SameSite=Strict; Path=/$`),
    );
    const runs = await rawRequest(ui.port, "/api/runs", { headers: { Cookie: cookie } });
    expect(runs.status).toBe(200);
    expect(JSON.parse(runs.body).runs[0]).toMatchObject({ run: "default" });
  });

  it("refuses a Host that is not its own address, token and cookie notwithstanding (DNS rebinding)", async () => {
    const url = new URL(ui.url);
    for (const host of ["evil.example", `evil.example:${ui.port}`, `127.0.0.1:${ui.port + 1}`, "127.0.0.1"]) {
      const withCookie = await rawRequest(ui.port, "/api/runs", { headers: { Host: host, Cookie: cookie } });
      expect(withCookie.status, host).toBe(421);
      const withToken = await rawRequest(ui.port, `/${url.search}`, { headers: { Host: host } });
      expect(withToken.status, host).toBe(421);
    }
    for (const host of [`localhost:${ui.port}`, `[::1]:${ui.port}`]) {
      expect(
        (await rawRequest(ui.port, "/api/runs", { headers: { Host: host, Cookie: cookie } })).status,
      ).toBe(200);
    }
  });

  it("refuses a cancel without the cookie, with a foreign Origin, without an Origin, or not as JSON", async () => {
    const json = { "Content-Type": "application/json" };
    const own = { Origin: ui.origin };
    const cases: [Record<string, string>, number][] = [
      [{ ...json, ...own }, 401],
      [{ ...json, Cookie: cookie, Origin: "http://evil.example" }, 403],
      [{ ...json, Cookie: cookie, Origin: `http://127.0.0.1:${ui.port + 1}` }, 403],
      [{ ...json, Cookie: cookie }, 403],
      [{ ...own, Cookie: cookie, "Content-Type": "text/plain" }, 415],
      [{ ...own, Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" }, 415],
    ];
    for (const [headers, status] of cases) {
      const answer = await rawRequest(ui.port, cancelPath(), { method: "POST", headers, body: "{}" });
      expect(answer.status, JSON.stringify(headers)).toBe(status);
    }
    // A GET changes nothing either.
    expect((await rawRequest(ui.port, cancelPath(), { headers: { Cookie: cookie } })).status).toBe(404);
    expect(fs.existsSync(path.join(live.dir, "cancel"))).toBe(false);
    expect((await runCli(["status", "--json"], { env })).stdout).toContain('"state":"running"');
  });

  it("sends a CSP that allows no inline script and nothing from another origin, on every answer", async () => {
    for (const [p, headers] of [
      ["/", { Cookie: cookie }],
      ["/api/runs", { Cookie: cookie }],
      ["/", {}],
    ] as const) {
      const answer = await rawRequest(ui.port, p, { headers });
      const csp = String(answer.headers["content-security-policy"]);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe");
      expect(csp).not.toMatch(/https?:/);
      expect(answer.headers["x-content-type-options"]).toBe("nosniff");
      expect(answer.headers["referrer-policy"]).toBe("no-referrer");
    }
    const page = await rawRequest(ui.port, "/", { headers: { Cookie: cookie } });
    expect(page.body).not.toMatch(/<script>|<script [^>]*>[^<]|\son\w+=|\sstyle=/);
    expect(page.body).toContain('<script type="module" src="/assets/app.js"></script>');
  });

  it("listens on loopback only", async () => {
    const outside = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a !== undefined && a.family === "IPv4" && !a.internal);
    if (outside === undefined) return; // a machine with loopback alone: nothing else to try
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: outside.address, port: ui.port });
      socket.once("connect", () => {
        socket.destroy();
        resolve(false);
      });
      socket.once("error", () => resolve(true));
    });
    expect(refused, `connected to ${outside.address}:${ui.port}`).toBe(true);
  });

  it("warns when --host makes it reachable from elsewhere, ends on Ctrl-C with exit 0", async () => {
    const wide = await startUiServer(env, ["--host", "0.0.0.0"]);
    await waitFor("the warning", () => (wide.stderr().includes("warning") ? true : undefined));
    expect(wide.stderr()).toMatch(
      /warning: listening on 0\.0\.0\.0: anyone who can reach this address and has the token can see every dispatch and cancel them/,
    );
    expect(await wide.stop()).toBe(0);
    const bad = await runCli(["ui", "--no-open", "--port", "99999"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/E_INPUT_INVALID: --port "99999" is not a port/);
  });
});
