import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as path from "node:path";
import { allowsConnection, isLoopback, type NetRule } from "../../src/domain/sandbox/sandbox.js";

// The network side of the sandbox (specs/sandbox.md, "Network"): the agent's namespace has a loopback and
// nothing else; the bridges inside it (bridge.ts) carry its connections over unix sockets to here, the
// supervisor, which opens those on the allow list and refuses the rest, each refusal a line of
// sandbox.log. It lives in the supervisor's process: it cannot die alone, and an adopter listens again on
// the same sockets (a connection open when a supervisor died dies with it; the next one is served).

/** A refusal, as sandbox.log says it. */
export interface Denial {
  host: string;
  port: number;
  /** CONNECT for a tunnel (https), else the request's method (plain http). */
  method: string;
  why: string;
}

export interface SandboxProxy {
  close(): Promise<void>;
}

/** The socket the agent's HTTP(S)_PROXY reaches, and one per allowed loopback port. */
export function proxySocket(socketDir: string): string {
  return path.join(socketDir, "proxy.sock");
}

export function portSocket(socketDir: string, port: number): string {
  return path.join(socketDir, `port-${port}.sock`);
}

/** Where a loopback name connects to on this host. */
function target(host: string): string {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  return isLoopback(bare) ? (bare === "::1" ? "::1" : "127.0.0.1") : bare;
}

/** `host:port` of a CONNECT's target, or null when it is not one. */
function authority(text: string): { host: string; port: number } | null {
  const match = /^(\[[0-9a-fA-F:]+\]|[^:/\s]+):(\d{1,5})$/.exec(text);
  if (match === null) return null;
  const port = Number(match[2]);
  return port >= 1 && port <= 65_535 ? { host: (match[1] as string).toLowerCase(), port } : null;
}

function pipeBoth(a: net.Socket, b: net.Socket): void {
  a.pipe(b);
  b.pipe(a);
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.on("error", end);
  b.on("error", end);
  a.on("close", end);
  b.on("close", end);
}

function listen(server: net.Server, socket: string): Promise<void> {
  // A socket file an earlier supervisor of this dispatch left: it is listened on again.
  fs.rmSync(socket, { force: true });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => {
      server.off("error", reject);
      fs.chmodSync(socket, 0o600);
      resolve();
    });
  });
}

/** What a refusal does: `onDenied` is told, and the agent gets these words. */
type Refuse = (denial: Denial) => string;
/** Keeps a socket among those `close` destroys. */
type Track = (socket: net.Socket) => void;

/**
 * Starts the proxy of one dispatch: an HTTP proxy (CONNECT tunnels and plain requests in absolute form)
 * on `proxy.sock` that lets through what `rules` allow, and a plain relay per loopback port. `onDenied`
 * is told every refusal.
 */
export async function startSandboxProxy(options: {
  socketDir: string;
  rules: readonly NetRule[];
  loopbackPorts: readonly number[];
  onDenied: (denial: Denial) => void;
}): Promise<SandboxProxy> {
  const { rules, onDenied } = options;
  const sockets = new Set<net.Socket>();
  const track: Track = (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  };
  const refuse: Refuse = (denial) => {
    onDenied(denial);
    return `catherd's sandbox refused ${denial.host}:${denial.port}: ${denial.why}`;
  };
  const proxy = http.createServer(plainRequests(rules, refuse));
  proxy.on("connection", track);
  proxy.on("connect", tunnels(rules, refuse, track));
  proxy.on("clientError", (_error, socket) => socket.destroy());
  const relays = options.loopbackPorts.map((port) => ({ relay: relayTo(port, track), port }));
  const servers: net.Server[] = [proxy, ...relays.map((r) => r.relay)];
  try {
    await listen(proxy, proxySocket(options.socketDir));
    for (const { relay, port } of relays) await listen(relay, portSocket(options.socketDir, port));
  } catch (error) {
    for (const server of servers) server.close();
    throw error;
  }
  return {
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(
        servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
      );
    },
  };
}

/** Plain http requests in absolute form: passed on when `rules` allow their host and port, else a 403. */
function plainRequests(rules: readonly NetRule[], refuse: Refuse): http.RequestListener {
  return (request, response) => {
    let url: URL;
    try {
      url = new URL(request.url ?? "");
    } catch {
      response
        .writeHead(400, { "content-type": "text/plain" })
        .end("catherd's sandbox: a proxy request names its URL whole\n");
      return;
    }
    const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
    const host = url.hostname.toLowerCase();
    if (url.protocol !== "http:" || !allowsConnection(rules, host, port)) {
      const why =
        url.protocol !== "http:" ? `${url.protocol} is not proxied in the clear` : "not on the allow list";
      const text = refuse({ host, port, method: request.method ?? "GET", why });
      response.writeHead(403, { "content-type": "text/plain" }).end(`${text}\n`);
      return;
    }
    const headers = { ...request.headers };
    delete headers["proxy-connection"];
    delete headers["proxy-authorization"];
    const upstream = http.request(
      { host: target(host), port, method: request.method, path: `${url.pathname}${url.search}`, headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on("error", (error) => {
      if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" });
      response.end(`catherd's sandbox could not reach ${host}:${port}: ${error.message}\n`);
    });
    request.pipe(upstream);
  };
}

/** CONNECT tunnels: opened to what `rules` allow, else a 403. */
function tunnels(
  rules: readonly NetRule[],
  refuse: Refuse,
  track: Track,
): (request: http.IncomingMessage, client: net.Socket, head: Buffer) => void {
  return (request, client, head) => {
    // The http server stops watching the socket of a CONNECT: the agent may hang up at any moment (it was
    // killed, it gave up), and a write to it that fails ends this connection, never the supervisor.
    client.on("error", () => client.destroy());
    const asked = authority(request.url ?? "");
    if (asked === null || !allowsConnection(rules, asked.host, asked.port)) {
      const denial = asked ?? { host: String(request.url).slice(0, 200), port: 0 };
      const text = refuse({ ...denial, method: "CONNECT", why: "not on the allow list" });
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${text}\n`);
      return;
    }
    const upstream = net.connect(asked.port, target(asked.host));
    track(upstream);
    openTunnel(client, upstream, head, asked);
  };
}

/** The tunnel's answer once `upstream` connects (a 502 when it cannot), then bytes both ways. */
function openTunnel(
  client: net.Socket,
  upstream: net.Socket,
  head: Buffer,
  asked: { host: string; port: number },
): void {
  const unreachable = (error: Error) => {
    client.end(
      `HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\ncatherd's sandbox could not reach ${asked.host}:${asked.port}: ${error.message}\n`,
    );
  };
  const hungUp = () => upstream.destroy();
  upstream.once("error", unreachable);
  client.once("close", hungUp);
  upstream.once("connect", () => {
    // From here on the tunnel's own ends (pipeBoth) say what a failure does.
    upstream.off("error", unreachable);
    client.off("close", hungUp);
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    pipeBoth(client, upstream);
  });
}

/** A relay to a loopback port of this host: each connection piped to one of its own. */
function relayTo(port: number, track: Track): net.Server {
  return net.createServer((client) => {
    track(client);
    const upstream = net.connect(port, "127.0.0.1");
    track(upstream);
    pipeBoth(client, upstream);
  });
}
