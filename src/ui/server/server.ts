import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { isValidId } from "../../domain/ids.js";
import type { Clock } from "../../infra/clock.js";
import type { DispatchWire, PushWire, RunsWire, RunWire } from "../wire.js";
import { attemptsOf, Details } from "./detail.js";
import { Guard, SECURITY_HEADERS, sendJson, sendText } from "./guard.js";
import { HomeModel } from "./home-model.js";
import { cancelDispatch } from "./reader.js";

// The dashboard's server (specs/ui.md): node's own http module — the page needs a handful of routes, a
// stream of server-sent events and strict headers, which a framework would add nothing to but weight and
// a second set of defaults to audit. It serves the bundled page (dist/ui/), a JSON API over the runs of
// one home, and /api/events, a stream of what changed. Everything passes the Guard first.

export interface UiOptions {
  home: string;
  /** The address to listen on: loopback unless told otherwise. */
  host: string;
  /** 0: any free port. */
  port: number;
  /** The run whose page the printed address opens. */
  run: string | null;
  /** What dates the pages' and pushes' `now` (the wall clock: the page sets its times against it). */
  clock: Clock;
}

export interface UiServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);
/** Idle streams get a comment this often, so that no proxy or browser takes them for dead. */
const KEEPALIVE_MS = 25_000;
/** Pushes of the runs list are coalesced to at most one per this long per page. */
const RUNS_PUSH_MS = 500;
const MAX_STREAMS = 64;

/** The page's files, read once at start: index.html, app.js, app.css. */
interface Assets {
  html: Buffer;
  files: Map<string, { body: Buffer; type: string }>;
}

/** Starts the server and resolves once it listens. */
export async function startUi(options: UiOptions): Promise<UiServer> {
  const assets = loadAssets(import.meta.url);
  const model = new HomeModel(options.home, options.clock);
  const details = new Details(options.clock);
  const streams = new Set<http.ServerResponse>();
  let guard: Guard | null = null;

  const server = http.createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        sendText(res, 500, `error: ${error instanceof Error ? error.message : String(error)}`);
      else res.destroy();
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://dashboard.invalid");
    if (guard === null) return sendText(res, 503, "starting");
    const verdict = guard.judge(req, url);
    if (verdict.kind === "refused") return sendText(res, verdict.status, verdict.message);
    if (verdict.kind === "exchange") {
      res.writeHead(303, { ...SECURITY_HEADERS, Location: verdict.location, "Set-Cookie": verdict.cookie });
      return void res.end();
    }
    const parts = url.pathname.split("/").filter((p) => p !== "");
    if (req.method === "POST") return post(req, res, parts);
    if (parts[0] === "assets") {
      const file = assets.files.get(parts.slice(1).join("/"));
      if (file === undefined) return sendText(res, 404, "not found");
      res.writeHead(200, { ...SECURITY_HEADERS, "Content-Type": file.type, "Cache-Control": "no-cache" });
      return void res.end(file.body);
    }
    if (parts[0] === "api") return api(req, res, parts.slice(1), url);
    if (url.pathname === "/favicon.ico") {
      res.writeHead(204, SECURITY_HEADERS);
      return void res.end();
    }
    if (isPageRoute(parts)) {
      res.writeHead(200, { ...SECURITY_HEADERS, "Content-Type": "text/html; charset=utf-8" });
      return void res.end(assets.html);
    }
    return sendText(res, 404, "not found");
  }

  async function api(req: http.IncomingMessage, res: http.ServerResponse, parts: string[], url: URL) {
    const [first, runName, what, id] = parts;
    if (first === "events" && parts.length === 1) return events(req, res, url);
    if (first !== "runs") return sendText(res, 404, "not found");
    if (runName === undefined) {
      const body: RunsWire = {
        home: options.home,
        runs: model.summaries(),
        now: options.clock.wallNow().getTime(),
      };
      return sendJson(res, 200, body);
    }
    const run = isValidId(runName) ? model.run(runName) : null;
    if (run === null) return sendJson(res, 404, { error: `no run ${runName.slice(0, 80)}` });
    await run.loaded;
    if (what === undefined) {
      const body: RunWire = {
        run: runName,
        rows: run.rows(),
        bars: run.bars(),
        now: options.clock.wallNow().getTime(),
      };
      return sendJson(res, 200, body);
    }
    const known =
      what === "dispatches" && id !== undefined && parts.length === 4 ? run.entries.get(id) : undefined;
    if (known === undefined) return sendJson(res, 404, { error: "no such dispatch in the run" });
    const entry = await run.fullEntry(known);
    const body: DispatchWire = details.of(
      runName,
      entry,
      attemptsOf(entry, (i) => run.entries.get(i)),
    );
    return sendJson(res, 200, body);
  }

  async function post(req: http.IncomingMessage, res: http.ServerResponse, parts: string[]) {
    // The only change the page can ask for: cancel, by run and id — never by a path the request names.
    const [api, runs, runName, dispatches, id, action] = parts;
    const body = await readBody(req);
    if (body === null) return sendText(res, 413, "refused: body too large");
    if (
      api !== "api" ||
      runs !== "runs" ||
      dispatches !== "dispatches" ||
      action !== "cancel" ||
      parts.length !== 6 ||
      runName === undefined ||
      id === undefined ||
      !isValidId(runName)
    )
      return sendText(res, 404, "not found");
    const run = model.run(runName);
    await run?.loaded;
    const dir = run?.dirOf(id) ?? null;
    if (run === null || dir === null) return sendJson(res, 404, { error: "no such dispatch in the run" });
    try {
      const result = await cancelDispatch(dir, options.clock);
      void run.flush();
      return sendJson(res, 200, result);
    } catch (error) {
      const e = error as { code?: string; message?: string; fix?: string };
      return sendJson(res, 409, {
        error: { code: e.code ?? "E_INTERNAL", message: e.message ?? String(error), fix: e.fix ?? null },
      });
    }
  }

  function events(req: http.IncomingMessage, res: http.ServerResponse, url: URL): void {
    if (streams.size >= MAX_STREAMS) {
      sendText(res, 503, "too many open pages");
      return;
    }
    const run = url.searchParams.get("run");
    const dispatch = url.searchParams.get("dispatch");
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "Content-Type": "text/event-stream; charset=utf-8",
      Connection: "keep-alive",
    });
    res.write("retry: 1000\n\n");
    streams.add(res);
    let runsPending: NodeJS.Timeout | null = null;
    const send = (push: PushWire) => res.write(`data: ${JSON.stringify(push)}\n\n`);
    const unsubscribe = model.subscribe((push) => {
      if (push.type === "runs") {
        if (runsPending === null) {
          runsPending = setTimeout(() => {
            runsPending = null;
            send(push);
          }, RUNS_PUSH_MS);
        }
      } else if (push.type === "dispatch") {
        if (push.run === run && push.dispatchId === dispatch) send(push);
      } else if (push.run === run) send(push);
    });
    const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), KEEPALIVE_MS);
    keepAlive.unref();
    req.on("close", () => {
      unsubscribe();
      clearInterval(keepAlive);
      if (runsPending !== null) clearTimeout(runsPending);
      streams.delete(res);
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;
  guard = new Guard(hostsFor(options.host, port), port);
  const shownHost = LOOPBACK.has(options.host)
    ? "127.0.0.1"
    : options.host === "0.0.0.0" || options.host === "::"
      ? os.hostname()
      : options.host;
  const where = options.run === null ? "/" : `/runs/${options.run}`;
  return {
    url: `http://${bracket(shownHost)}:${port}${where}?token=${guard.token}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        model.close();
        for (const res of streams) res.end();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The page's own routes: the runs, a run, a dispatch. */
function isPageRoute(parts: string[]): boolean {
  if (parts.length === 0) return true;
  if (parts[0] !== "runs" || !isValidId(parts[1] ?? "")) return false;
  return parts.length === 2 || (parts.length === 4 && parts[2] === "dispatches" && isValidId(parts[3] ?? ""));
}

/** Every `host:port` a browser may name this server by: the address it listens on (all of the machine's for 0.0.0.0). */
export function hostsFor(host: string, port: number): Set<string> {
  const names = new Set<string>();
  const add = (h: string) => names.add(`${bracket(h)}:${port}`.toLowerCase());
  if (LOOPBACK.has(host) || host === "0.0.0.0" || host === "::") for (const h of LOOPBACK) add(h);
  if (host === "0.0.0.0" || host === "::") {
    add(os.hostname());
    for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) add(a.address);
  } else add(host);
  return names;
}

function bracket(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** A request's body, at most 16 KiB (null past that). */
function readBody(req: http.IncomingMessage): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= 16 * 1024) chunks.push(chunk);
    });
    req.on("end", () => resolve(size > 16 * 1024 ? null : Buffer.concat(chunks).toString("utf8")));
    req.on("error", () => resolve(null));
  });
}

/** dist/ui/ beside the program: dist/bin/../ui when bundled, dist/ui above a compiled module. */
function loadAssets(fromUrl: string): Assets {
  const here = path.dirname(fileURLToPath(fromUrl));
  let dir: string | null = null;
  for (let d = here; ; d = path.dirname(d)) {
    for (const candidate of [path.join(d, "ui"), path.join(d, "dist", "ui")]) {
      if (dir === null && fs.existsSync(path.join(candidate, "index.html"))) dir = candidate;
    }
    if (dir !== null || path.dirname(d) === d) break;
  }
  if (dir === null)
    throw new Error(
      `the dashboard's page is not built (no dist/ui/index.html above ${here}): run npm run build`,
    );
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const [name, type] of [
    ["app.js", "text/javascript; charset=utf-8"],
    ["app.css", "text/css; charset=utf-8"],
  ] as const) {
    files.set(name, { body: fs.readFileSync(path.join(dir, name)), type });
  }
  return { html: fs.readFileSync(path.join(dir, "index.html")), files };
}
