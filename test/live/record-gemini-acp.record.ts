import * as fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkPrerequisites } from "./harness.js";
import { type MockModelServer, startMockModelServer } from "./mock-model-server.js";
import { AcpSession, acpPlace, isMethod, isResponse, isUpdate } from "./record-gemini-acp.js";

// Records test/fixtures/recorded/gemini-acp/ (record-gemini-acp.ts says how): run only by
// `npm run record:gemini-acp`, never by a suite, with CATHERD_RECORD_GEMINI_ACP naming the folder to write.
const OUT = process.env.CATHERD_RECORD_GEMINI_ACP;
if (OUT === undefined || OUT === "") {
  throw new Error("CATHERD_RECORD_GEMINI_ACP=<folder> npm run record:gemini-acp: name the folder to write");
}

let server: MockModelServer;
const roots: string[] = [];

beforeAll(async () => {
  server = await startMockModelServer({ quiet: true });
});
afterAll(async () => {
  await server.close();
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

const port = () => new URL(server.baseUrl("steer")).port;

function place(scenario: string) {
  checkPrerequisites("gemini");
  const p = acpPlace(server, scenario);
  roots.push(p.root);
  return p;
}

/** initialize, then session/new: the session's id. */
async function opened(s: AcpSession, cwd: string): Promise<string> {
  s.send({
    jsonrpc: "2.0",
    id: "init",
    method: "initialize",
    params: { protocolVersion: 1, clientCapabilities: {} },
  });
  await s.next("initialize's answer", isResponse("init"));
  s.send({ jsonrpc: "2.0", id: "session", method: "session/new", params: { cwd, mcpServers: [] } });
  const answer = await s.next("session/new's answer", isResponse("session"));
  return String((answer.result as { sessionId: string }).sessionId);
}

const prompt = (sessionId: string, id: string, text: string) => ({
  jsonrpc: "2.0",
  id,
  method: "session/prompt",
  params: { sessionId, prompt: [{ type: "text", text }] },
});
/** catherd's echo request: a method gemini does not have, answered at once, in the order read. */
const echo = (id: string) => ({ jsonrpc: "2.0", id, method: "_catherd/echo", params: {} });

describe("recording gemini --acp", () => {
  const out = OUT;

  it("a prompt with a tool call, and the echo request after it", async () => {
    const p = place("steer");
    const s = new AcpSession(p.env, p.cwd, ["--approval-mode", "yolo"]);
    const sessionId = await opened(s, p.cwd);
    s.send(prompt(sessionId, "prompt:u-brief", "Please RUN echo hello-tool"));
    s.send(echo("taken:u-brief"));
    await s.next("the prompt's answer", isResponse("prompt:u-brief"));
    await s.end();
    s.save(out, "tool-turn", { root: p.root, port: port() });
  });

  it("a second prompt mid-tool cancels the first", async () => {
    const p = place("steer");
    const s = new AcpSession(p.env, p.cwd, ["--approval-mode", "yolo"]);
    const sessionId = await opened(s, p.cwd);
    s.send(prompt(sessionId, "prompt:u-brief", "Please RUN sleep 4; echo slept-four"));
    await s.next("the tool call", isUpdate("tool_call"));
    s.send(prompt(sessionId, "prompt:u-mid", "MIDTOOL-NOTE: also mention the weather"));
    await s.next("the first prompt's answer", isResponse("prompt:u-brief"));
    await s.next("the second prompt's answer", isResponse("prompt:u-mid"));
    await s.end();
    s.save(out, "prompt-midtool", { root: p.root, port: port() });
  });

  it("a message queued until the turn's end, then the next prompt", async () => {
    const p = place("steer");
    const s = new AcpSession(p.env, p.cwd, ["--approval-mode", "yolo"]);
    const sessionId = await opened(s, p.cwd);
    s.send(prompt(sessionId, "prompt:u-brief", "Please RUN sleep 2; echo slept-two"));
    s.send(echo("taken:u-brief"));
    await s.next("the prompt's answer", isResponse("prompt:u-brief"));
    s.send(prompt(sessionId, "prompt:u-next", "QUEUED-NOTE: and now say bye"));
    s.send(echo("taken:u-next"));
    await s.next("the second prompt's answer", isResponse("prompt:u-next"));
    await s.end();
    s.save(out, "queued-next", { root: p.root, port: port() });
  });

  it("session/cancel mid-tool, then a redirect", async () => {
    const p = place("steer");
    const s = new AcpSession(p.env, p.cwd, ["--approval-mode", "yolo"]);
    const sessionId = await opened(s, p.cwd);
    s.send(prompt(sessionId, "prompt:u-brief", "Please RUN sleep 30; echo never"));
    await s.next("the tool call", isUpdate("tool_call"));
    s.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    await s.next("the prompt's answer", isResponse("prompt:u-brief"));
    s.send(prompt(sessionId, "prompt:u-redirect", "REDIRECT: say hi instead"));
    await s.next("the redirect's answer", isResponse("prompt:u-redirect"));
    await s.end();
    s.save(out, "cancel-redirect", { root: p.root, port: port() });
  });

  it("a permission rejected, then one allowed", async () => {
    const p = place("steer");
    const s = new AcpSession(p.env, p.cwd, []);
    const sessionId = await opened(s, p.cwd);
    s.send(prompt(sessionId, "prompt:u-brief", "Please RUN touch denied.txt"));
    const ask = await s.next("the permission ask", isMethod("session/request_permission"));
    s.send({ jsonrpc: "2.0", id: ask.id, result: { outcome: { outcome: "selected", optionId: "cancel" } } });
    await s.next("the prompt's answer", isResponse("prompt:u-brief"));
    const n = s.read.length;
    s.send(prompt(sessionId, "prompt:u-next", "Please RUN touch allowed.txt"));
    const ask2 = await s.next("the second ask", isMethod("session/request_permission"), n);
    s.send({
      jsonrpc: "2.0",
      id: ask2.id,
      result: { outcome: { outcome: "selected", optionId: "proceed_once" } },
    });
    await s.next("the second prompt's answer", isResponse("prompt:u-next"));
    await s.end();
    expect(fs.existsSync(`${p.cwd}/denied.txt`)).toBe(false);
    expect(fs.existsSync(`${p.cwd}/allowed.txt`)).toBe(true);
    s.save(out, "permission", { root: p.root, port: port() });
  });

  it("session/cancel while a permission is asked", async () => {
    const p = place("steer");
    const s = new AcpSession(p.env, p.cwd, []);
    const sessionId = await opened(s, p.cwd);
    s.send(prompt(sessionId, "prompt:u-brief", "Please RUN touch never.txt"));
    const ask = await s.next("the permission ask", isMethod("session/request_permission"));
    s.send({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    await new Promise((r) => setTimeout(r, 3000));
    const before = s.messages().some(isResponse("prompt:u-brief"));
    s.send({ jsonrpc: "2.0", id: ask.id, result: { outcome: { outcome: "cancelled" } } });
    await s.next("the prompt's answer", isResponse("prompt:u-brief"));
    s.send(echo(`answered-before-the-outcome:${before}`));
    await s.next("the echo", isResponse(`answered-before-the-outcome:${before}`));
    await s.end();
    s.save(out, "permission-cancel", { root: p.root, port: port() });
  });

  it("requests before initialize", async () => {
    const p = place("steer");
    const s = new AcpSession(p.env, p.cwd, []);
    s.send({ jsonrpc: "2.0", id: "session", method: "session/new", params: { cwd: p.cwd, mcpServers: [] } });
    await s.next("session/new's answer", isResponse("session"));
    s.send({
      jsonrpc: "2.0",
      id: "bogus-prompt",
      method: "session/prompt",
      params: { sessionId: "nope", prompt: [{ type: "text", text: "hi" }] },
    });
    await s.next("the answer", isResponse("bogus-prompt"));
    await s.end();
    s.save(out, "before-initialize", { root: p.root, port: port() });
  });

  it("session/load of an earlier session", async () => {
    const p = place("steer");
    const s = new AcpSession(p.env, p.cwd, ["--approval-mode", "yolo"]);
    const sessionId = await opened(s, p.cwd);
    s.send(prompt(sessionId, "prompt:u-brief", "Please RUN echo first-turn"));
    await s.next("the prompt's answer", isResponse("prompt:u-brief"));
    await s.end();
    const t = new AcpSession(p.env, p.cwd, ["--approval-mode", "yolo"]);
    t.send({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: 1, clientCapabilities: {} },
    });
    await t.next("initialize's answer", isResponse("init"));
    t.send({
      jsonrpc: "2.0",
      id: `session:${sessionId}`,
      method: "session/load",
      params: { sessionId, cwd: p.cwd, mcpServers: [] },
    });
    await t.next("session/load's answer", isResponse(`session:${sessionId}`));
    t.send(prompt(sessionId, "prompt:u-follow", "FOLLOW-UP: what did the command print?"));
    await t.next("the prompt's answer", isResponse("prompt:u-follow"));
    await t.end();
    s.save(out, "load-first", { root: p.root, port: port() });
    t.save(out, "load", { root: p.root, port: port() });
  });

  it("session/load by the load key (the id led by a space): the history replayed, then a follow-up prompt", async () => {
    const p = place("steer");
    const s = new AcpSession(p.env, p.cwd, ["--approval-mode", "yolo"]);
    const sessionId = await opened(s, p.cwd);
    s.send(prompt(sessionId, "prompt:u-brief", "Please RUN echo first-turn"));
    s.send(echo("taken:u-brief"));
    await s.next("the prompt's answer", isResponse("prompt:u-brief"));
    await s.end();
    const t = new AcpSession(p.env, p.cwd, ["--approval-mode", "yolo"]);
    const key = ` ${sessionId}`;
    t.send({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: 1, clientCapabilities: {} },
    });
    t.send({
      jsonrpc: "2.0",
      id: `session:${sessionId}`,
      method: "session/load",
      params: { sessionId: key, cwd: p.cwd, mcpServers: [] },
    });
    await t.next("session/load's answer", isResponse(`session:${sessionId}`));
    t.send(prompt(key, "prompt:u-follow", "FOLLOW-UP: what did the command print?"));
    t.send(echo("taken:u-follow"));
    await t.next("the prompt's answer", isResponse("prompt:u-follow"));
    await t.end();
    t.save(out, "load-key", { root: p.root, port: port() });
  });

  // always429 is left out: gemini retries a 429 for minutes before it answers the prompt.
  for (const scenario of ["auth401", "model404", "context400"]) {
    it(`a prompt that fails: ${scenario}`, async () => {
      const p = place(scenario);
      const s = new AcpSession(p.env, p.cwd, ["--approval-mode", "yolo"]);
      const sessionId = await opened(s, p.cwd).catch(() => null);
      if (sessionId !== null) {
        s.send(prompt(sessionId, "prompt:u-brief", "Please say hello"));
        await s.next("the prompt's answer", isResponse("prompt:u-brief"));
      }
      await s.end();
      s.save(out, scenario, { root: p.root, port: port() });
    });
  }
});
