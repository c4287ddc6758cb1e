import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { proxySocket, type SandboxProxy, startSandboxProxy } from "../../supervisor/sandbox/proxy.js";

// The sandbox's proxy lives in the supervisor's process (specs/sandbox.md, "Network"): an agent that hangs up
// while the proxy answers it — a refusal written to a client already gone, an upstream that fails after
// the agent was killed — must cost that connection only, never the supervisor (an unhandled EPIPE killed
// one between exit.json and record.json in the live suite).

let proxy: SandboxProxy | null = null;
let dir: string | null = null;

afterEach(async () => {
  await proxy?.close();
  proxy = null;
  if (dir !== null) fs.rmSync(dir, { recursive: true, force: true });
  dir = null;
});

/** A port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Sends `request` on the proxy's socket and hangs up at once, before any answer. */
async function askAndHangUp(socket: string, request: string): Promise<void> {
  const client = net.connect(socket);
  await new Promise<void>((resolve, reject) => {
    client.once("connect", resolve);
    client.once("error", reject);
  });
  client.write(request);
  client.destroy();
}

describe("the sandbox's proxy, when the agent hangs up first", () => {
  it("lives on through refusals and failed tunnels written to clients already gone", async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "catherd-sandbox-proxy-"));
    const port = await deadPort();
    const denied: string[] = [];
    proxy = await startSandboxProxy({
      socketDir: dir,
      rules: [{ host: "127.0.0.1", port }],
      loopbackPorts: [],
      onDenied: (d) => denied.push(`${d.host}:${d.port}`),
    });
    const socket = proxySocket(dir);
    for (let i = 0; i < 20; i++) {
      // Refused: not on the allow list. Allowed, but nothing listens there: a failed tunnel.
      await askAndHangUp(socket, "CONNECT github.com:443 HTTP/1.1\r\nhost: github.com:443\r\n\r\n");
      await askAndHangUp(socket, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`);
    }
    // Whatever the proxy wrote to the gone clients has failed by now; it still answers a new one.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const answer = await new Promise<string>((resolve, reject) => {
      const client = net.connect(socket);
      let text = "";
      client.on("data", (d: Buffer) => {
        text += d.toString();
      });
      client.on("close", () => resolve(text));
      client.on("error", reject);
      client.write("CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n");
    });
    expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(denied).toContain("github.com:443");
    expect(denied).toContain("example.com:443");
  });
});
