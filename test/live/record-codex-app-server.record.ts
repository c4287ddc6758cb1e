import * as fs from "node:fs";
import { afterAll, beforeAll, describe, it } from "vitest";
import { checkPrerequisites } from "./harness.js";
import { type MockModelServer, startMockModelServer } from "./mock-model-server.js";
import { AppServerSession, appServerPlace, isMethod, isResponse } from "./record-codex-app-server.js";

// Records test/fixtures/recorded/codex-app-server/ (record-codex-app-server.ts says how): run only by
// `npm run record:codex-app-server`, never by a suite, with CATHERD_RECORD_APP_SERVER naming the folder to write.
const OUT = process.env.CATHERD_RECORD_APP_SERVER;
if (OUT === undefined || OUT === "") {
  throw new Error(
    "CATHERD_RECORD_APP_SERVER=<folder> npm run record:codex-app-server: name the folder to write",
  );
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

async function opened(scenario: string, thread: Record<string, unknown> = {}) {
  checkPrerequisites("codex");
  const place = appServerPlace(server, scenario);
  roots.push(place.root);
  const s = new AppServerSession(place.env, place.cwd);
  s.send({
    method: "initialize",
    id: "init",
    params: { clientInfo: { name: "catherd", title: null, version: "0.1.0" }, capabilities: null },
  });
  s.send({ method: "initialized" });
  s.send({
    method: "thread/start",
    id: "thread",
    params: { cwd: place.cwd, sandbox: "danger-full-access", approvalPolicy: "never", ...thread },
  });
  const started = await s.next("thread/start's answer", isResponse("thread"));
  const threadId = String((started.result as { thread: { id: string } }).thread.id);
  return { s, threadId };
}

const text = (t: string) => [{ type: "text", text: t, text_elements: [] }];

describe("recording codex app-server", () => {
  const out = OUT;

  it("a turn with a tool call", async () => {
    const { s, threadId } = await opened("steer");
    s.send({
      method: "turn/start",
      id: "brief",
      params: { threadId, input: text("Please RUN echo hello-tool"), clientUserMessageId: "u-brief" },
    });
    await s.next("turn/completed", isMethod("turn/completed"));
    await s.end();
    s.save(out, "tool-turn");
  });

  it("a steer mid-tool: refused without expectedTurnId, with a wrong one, then taken", async () => {
    const { s, threadId } = await opened("steer");
    s.send({
      method: "turn/start",
      id: "brief",
      params: {
        threadId,
        input: text("Please RUN sleep 4; echo slept-four"),
        clientUserMessageId: "u-brief",
      },
    });
    const item = await s.next(
      "the command's item/started",
      (m) =>
        m.method === "item/started" &&
        (m.params as { item: { type: string } }).item.type === "commandExecution",
    );
    const turnId = String((item.params as { turnId: string }).turnId);
    s.send({
      method: "turn/steer",
      id: "steer-missing",
      params: { threadId, input: text("MIDTOOL-NOTE: no id"), clientUserMessageId: "u-missing" },
    });
    await s.next("the refusal", isResponse("steer-missing"));
    s.send({
      method: "turn/steer",
      id: "steer-wrong",
      params: {
        threadId,
        input: text("MIDTOOL-NOTE: wrong id"),
        clientUserMessageId: "u-wrong",
        expectedTurnId: "019a0000-0000-7000-8000-000000000000",
      },
    });
    await s.next("the refusal", isResponse("steer-wrong"));
    s.send({
      method: "turn/steer",
      id: "steer",
      params: {
        threadId,
        input: text("MIDTOOL-NOTE: also mention the weather"),
        clientUserMessageId: "u-steer",
        expectedTurnId: turnId,
      },
    });
    await s.next("turn/completed", isMethod("turn/completed"));
    // Between turns: the next message is a turn/start.
    s.send({
      method: "turn/start",
      id: "next",
      params: { threadId, input: text("and now say bye"), clientUserMessageId: "u-next" },
    });
    const n = s.read.length;
    await s.next("the second turn/completed", isMethod("turn/completed"), n);
    await s.end();
    s.save(out, "steer-midtool");
  });

  it("a turn/start mid-turn gets a turn id that never starts", async () => {
    const { s, threadId } = await opened("steer");
    s.send({
      method: "turn/start",
      id: "brief",
      params: {
        threadId,
        input: text("Please RUN sleep 3; echo slept-three"),
        clientUserMessageId: "u-brief",
      },
    });
    await s.next(
      "the command's item/started",
      (m) =>
        m.method === "item/started" &&
        (m.params as { item: { type: string } }).item.type === "commandExecution",
    );
    s.send({
      method: "turn/start",
      id: "phantom",
      params: { threadId, input: text("a second start"), clientUserMessageId: "u-phantom" },
    });
    await s.next("turn/start's answer", isResponse("phantom"));
    await s.next("turn/completed", isMethod("turn/completed"));
    await s.end();
    s.save(out, "phantom-turn");
  });

  it("an interrupt, then the redirect as the next turn", async () => {
    const { s, threadId } = await opened("steer");
    s.send({
      method: "turn/start",
      id: "brief",
      params: {
        threadId,
        input: text("Please RUN sleep 60; echo never-printed"),
        clientUserMessageId: "u-brief",
      },
    });
    const item = await s.next(
      "the command's item/started",
      (m) =>
        m.method === "item/started" &&
        (m.params as { item: { type: string } }).item.type === "commandExecution",
    );
    const turnId = String((item.params as { turnId: string }).turnId);
    s.send({ method: "turn/interrupt", id: "interrupt", params: { threadId, turnId } });
    await s.next("turn/completed", isMethod("turn/completed"));
    const n = s.read.length;
    s.send({
      method: "turn/start",
      id: "redirect",
      params: {
        threadId,
        input: text("REDIRECT-NOW: say you are redirected"),
        clientUserMessageId: "u-redirect",
      },
    });
    await s.next("the redirect's turn/completed", isMethod("turn/completed"), n);
    await s.end();
    s.save(out, "interrupt");
  });

  it("an approval asked, declined; a question-less run under untrusted", async () => {
    const { s, threadId } = await opened("steer", { approvalPolicy: "untrusted" });
    s.send({
      method: "turn/start",
      id: "brief",
      params: {
        threadId,
        input: text("Please RUN node -e \"require('fs').writeFileSync('denied.txt','x')\""),
        clientUserMessageId: "u-brief",
      },
    });
    const ask = await s.next(
      "an approval request",
      (m) => typeof m.method === "string" && (m.method as string).endsWith("requestApproval"),
    );
    s.send({ id: ask.id, result: { decision: "decline" } });
    await s.next("turn/completed", isMethod("turn/completed"));
    const n = s.read.length;
    s.send({
      method: "turn/start",
      id: "next",
      params: {
        threadId,
        input: text("Now RUN node -e \"require('fs').writeFileSync('allowed.txt','x')\""),
        clientUserMessageId: "u-next",
      },
    });
    const ask2 = await s.next(
      "the second approval request",
      (m) => typeof m.method === "string" && (m.method as string).endsWith("requestApproval"),
      n,
    );
    s.send({ id: ask2.id, result: { decision: "accept" } });
    await s.next("the second turn/completed", isMethod("turn/completed"), n);
    await s.end();
    s.save(out, "approval");
  });

  for (const scenario of ["auth401", "context400", "model404", "always429"]) {
    it(`a failed turn: ${scenario}`, async () => {
      const { s, threadId } = await opened(scenario);
      s.send({
        method: "turn/start",
        id: "brief",
        params: {
          threadId,
          input: text("Run the scripted command, then report."),
          clientUserMessageId: "u-brief",
        },
      });
      await s.next("turn/completed", isMethod("turn/completed"));
      await s.end();
      s.save(out, scenario);
    });
  }
});
