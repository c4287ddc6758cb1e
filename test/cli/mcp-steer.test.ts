import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isolatedHome } from "../helpers/cli.js";
import { readJson, reapAll } from "../helpers/folders.js";
import { inProcessSession, type McpSession } from "../helpers/mcp.js";
import { FAKE_CLAUDE } from "../helpers/steering.js";
import { waitFor } from "../helpers/wait.js";

// Talking to a running agent through the MCP tools (specs/mcp.md, "Questions"; specs/steering.md): dispatch
// steerable, a question notified, answered with the answer tool, a message sent with the send tool, the
// record notified. The stand-in speaks Claude Code's stream-json protocol.

const dispatched: string[] = [];
let session: McpSession;
const saved = { home: process.env.CATHERD_HOME, run: process.env.CATHERD_RUN };

beforeEach(async () => {
  const { env } = isolatedHome();
  process.env.CATHERD_HOME = env.CATHERD_HOME;
  process.env.CATHERD_RUN = "";
  session = await inProcessSession();
});

afterEach(async () => {
  await session.close();
  process.env.CATHERD_HOME = saved.home;
  process.env.CATHERD_RUN = saved.run;
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

describe("steering through the MCP tools", () => {
  it("notifies a question, takes its answer and a message, and notifies the record", async () => {
    const started = await session.call("dispatch", {
      backend: "claude-code",
      bin: FAKE_CLAUDE,
      name: "asks",
      brief: "[ask] run it",
      onQuestion: "wait 2m",
      keepOpen: "1m",
    });
    expect(started.isError, started.text).toBe(false);
    const d = started.data.dispatched as { dispatchId: string; dir: string };
    dispatched.push(d.dispatchId);
    const question = await waitFor(
      "the question's notification",
      () => session.notices.find((n) => n.event === "question"),
      30_000,
    );
    expect(question).toMatchObject({ event: "question", name: "asks", id: "q1", kind: "permission" });
    expect(session.levels[session.notices.indexOf(question)]).toBe("notice");

    const answered = await session.call("answer", { name: "asks", question: "q1", allow: true });
    expect(answered.isError, answered.text).toBe(false);
    expect(answered.text).toBe("asks q1: allowed");
    await waitFor("the first turn's end", () =>
      fs.existsSync(path.join(d.dir, "questions", "q1.delivered.json")) &&
      fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8").includes('"type":"result"')
        ? true
        : undefined,
    );
    const sent = await session.call("send", { name: "asks", text: "and now the docs" });
    expect(sent.isError, sent.text).toBe(false);
    expect(sent.text).toMatch(/^asks: message \d{8}T\d{9}Z-[0-9a-z]{6} queued$/);
    const id = (sent.data.sent as { id: string }).id;
    const receipt = path.join(d.dir, "inbox", `${id}.state.json`);
    await waitFor("the message acted on", () =>
      fs.existsSync(receipt) && readJson(receipt).state === "acted" ? true : undefined,
    );
    expect((await session.call("cancel", { name: "asks" })).isError).toBe(false);
    const recorded = await waitFor(
      "the record's notification",
      () => session.notices.find((n) => n.event === "recorded"),
      30_000,
    );
    expect(recorded).toMatchObject({ name: "asks", status: "cancelled" });
    // A question is notified once.
    expect(session.notices.filter((n) => n.event === "question")).toHaveLength(1);
  });

  it("refuses a message to a dispatch that is not steerable, in the tool's terms", async () => {
    const started = await session.call("dispatch", {
      backend: "claude-code",
      bin: FAKE_CLAUDE,
      name: "plain",
      brief: "[tool:30000] a long job",
    });
    const d = started.data.dispatched as { dispatchId: string; dir: string };
    dispatched.push(d.dispatchId);
    await waitFor(
      "it to run",
      () => (fs.existsSync(path.join(d.dir, "proc.json")) ? true : undefined),
      20_000,
    );
    const refused = await session.call("send", { name: "plain", text: "more" });
    expect(refused.isError).toBe(true);
    expect(refused.data.error).toMatchObject({ code: "E_NOT_STEERABLE" });
    expect((await session.call("cancel", { name: "plain" })).isError).toBe(false);
    await waitFor("its record", () => session.notices.find((n) => n.event === "recorded"), 30_000);
  });
});
