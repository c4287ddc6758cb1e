import { randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

// Who may talk to the dashboard (specs/ui.md, "Security"). Every request needs the token printed at start,
// exchanged on the first request for an HttpOnly, SameSite=Strict cookie (and taken out of the address
// bar); a Host header that is not the server's own address is refused, so a DNS-rebinding page cannot
// reach it under its own name; a request that changes anything is a POST carrying the cookie, a JSON body
// and an Origin equal to the server's own. Every answer carries headers that keep the page from loading
// anything of another origin, from being framed, and from leaking its address.

/** Headers on every answer: a CSP without inline script or any other origin, no framing, no referrer. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Cache-Control": "no-store",
};

export type Verdict =
  | { kind: "ok" }
  /** The token was right: set the cookie and send the browser to `location` (the token left out). */
  | { kind: "exchange"; location: string; cookie: string }
  | { kind: "refused"; status: number; message: string };

export class Guard {
  /** Given in the printed address; never stored. */
  readonly token = randomBytes(24).toString("base64url");
  private readonly session = randomBytes(24).toString("base64url");
  /** Named after the port: cookies are not kept apart by port, two dashboards must not share one. */
  readonly cookieName: string;

  constructor(
    /** Every `host:port` this server answers to (its Host headers). */
    private readonly hosts: ReadonlySet<string>,
    port: number,
  ) {
    this.cookieName = `catherd_ui_${port}`;
  }

  judge(req: IncomingMessage, url: URL): Verdict {
    const host = req.headers.host ?? "";
    if (!this.hosts.has(host.toLowerCase())) {
      return {
        kind: "refused",
        status: 421,
        message: `refused: Host ${JSON.stringify(host.slice(0, 100))} is not this server's address`,
      };
    }
    const given = url.searchParams.get("token");
    if (given !== null && (req.method === "GET" || req.method === "HEAD")) {
      if (!same(given, this.token)) return { kind: "refused", status: 401, message: "refused: wrong token" };
      url.searchParams.delete("token");
      const query = url.searchParams.toString();
      return {
        kind: "exchange",
        location: `${url.pathname}${query === "" ? "" : `?${query}`}`,
        cookie: `${this.cookieName}=${this.session}; HttpOnly; SameSite=Strict; Path=/`,
      };
    }
    if (!same(this.cookieOf(req) ?? "", this.session)) {
      return {
        kind: "refused",
        status: 401,
        message: "refused: no session; open the address `catherd ui` printed (with its token)",
      };
    }
    if (req.method === "GET" || req.method === "HEAD") return { kind: "ok" };
    if (req.method !== "POST") return { kind: "refused", status: 405, message: "refused: GET or POST only" };
    if (req.headers.origin !== `http://${host}`) {
      return { kind: "refused", status: 403, message: "refused: a change needs this page's own Origin" };
    }
    if (!(req.headers["content-type"] ?? "").startsWith("application/json")) {
      return { kind: "refused", status: 415, message: "refused: a change is sent as application/json" };
    }
    return { kind: "ok" };
  }

  private cookieOf(req: IncomingMessage): string | null {
    for (const part of (req.headers.cookie ?? "").split(";")) {
      const eq = part.indexOf("=");
      if (eq !== -1 && part.slice(0, eq).trim() === this.cookieName) return part.slice(eq + 1).trim();
    }
    return null;
  }
}

/** Compares in constant time (the token must not be guessed a character at a time). */
function same(given: string, secret: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Writes a refusal or any short text answer, with the security headers. */
export function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "Content-Type": "text/plain; charset=utf-8" });
  res.end(`${text}\n`);
}

/** Writes a JSON answer with the security headers. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "Content-Type": "application/json; charset=utf-8" });
  res.end(JSON.stringify(value));
}
