import type { IncomingMessage, ServerResponse } from "node:http";
import { isValidId } from "../../domain/ids.js";
import { answerApi, answerCancel } from "./api.js";
import { type Guard, SECURITY_HEADERS, sendText } from "./guard.js";
import type { Exchange, Site } from "./site.js";

// Every request's way through the server: the Guard first, then a POST to the one change there is, the
// page's files, the API, or the page itself for any of its own routes; anything else is 404.

/** Answers one request; `guard` is null until the server knows its port (answered 503 meanwhile). */
export async function route(
  site: Site,
  guard: Guard | null,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://dashboard.invalid");
  if (guard === null) return sendText(res, 503, "starting");
  const verdict = guard.judge(req, url);
  if (verdict.kind === "refused") return sendText(res, verdict.status, verdict.message);
  if (verdict.kind === "exchange") {
    res.writeHead(303, { ...SECURITY_HEADERS, Location: verdict.location, "Set-Cookie": verdict.cookie });
    return void res.end();
  }
  const ex: Exchange = { req, res, url, parts: url.pathname.split("/").filter((p) => p !== "") };
  if (req.method === "POST") return answerCancel(site, ex);
  if (ex.parts[0] === "assets") return answerAsset(site, ex);
  if (ex.parts[0] === "api") return answerApi(site, ex);
  return answerPage(site, ex);
}

/** A request that threw: a 500 with its message, or the connection cut when the answer had begun. */
export function answerFailure(res: ServerResponse, error: unknown): void {
  if (!res.headersSent)
    sendText(res, 500, `error: ${error instanceof Error ? error.message : String(error)}`);
  else res.destroy();
}

/** One of the page's files under /assets/ (app.js, app.css), or 404. */
function answerAsset(site: Site, { res, parts }: Exchange): void {
  const file = site.assets.files.get(parts.slice(1).join("/"));
  if (file === undefined) {
    sendText(res, 404, "not found");
    return;
  }
  res.writeHead(200, { ...SECURITY_HEADERS, "Content-Type": file.type, "Cache-Control": "no-cache" });
  res.end(file.body);
}

/** The page (index.html) for each of its own routes, an empty favicon, 404 for the rest. */
function answerPage(site: Site, { res, url, parts }: Exchange): void {
  if (url.pathname === "/favicon.ico") {
    res.writeHead(204, SECURITY_HEADERS);
    res.end();
  } else if (isPageRoute(parts)) {
    res.writeHead(200, { ...SECURITY_HEADERS, "Content-Type": "text/html; charset=utf-8" });
    res.end(site.assets.html);
  } else sendText(res, 404, "not found");
}

/** The page's own routes: the runs, a run, a dispatch. */
function isPageRoute(parts: string[]): boolean {
  if (parts.length === 0) return true;
  if (parts[0] !== "runs" || !isValidId(parts[1] ?? "")) return false;
  return parts.length === 2 || (parts.length === 4 && parts[2] === "dispatches" && isValidId(parts[3] ?? ""));
}
