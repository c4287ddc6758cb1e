import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readJson } from "../helpers/folders.js";
import { useInProcessSession } from "../helpers/mcp.js";
import { FAKE_CLAUDE } from "../helpers/steering.js";
import { waitFor } from "../helpers/wait.js";

// Talking to a running agent through the MCP tools (specs/mcp.md, "Questions"; specs/steering.md): dispatch
// steerable, a question notified, answered with the answer tool, a message sent with the send tool, the
// record notified. The stand-in speaks Claude Code's stream-json protocol.

const mcp = useInProcessSession();

describe("steering through the MCP tools", () => {
  it("notifies a question, takes its answer and a message, and notifies the record", async () => {
    const started = await mcp.session.call("dispatch", {
      backend: "claude-code",
      bin: FAKE_CLAUDE,
      name: "asks",
      brief: "[ask] run it",
      onQuestion: "wait 2m",
      keepOpen: "1m",
    });
    expect(started.isError, started.text).toBe(false);
    const d = started.data.dispatched as { dispatchId: string; dir: string };
    mcp.dispatched.push(d.dispatchId);
    const question = await waitFor(
      "the question's notification",
      () => mcp.session.notices.find((n) => n.event === "question"),
      30_000,
    );
    expect(question).toMatchObject({ event: "question", name: "asks", id: "q1", kind: "permission" });
    expect(mcp.session.levels[mcp.session.notices.indexOf(question)]).toBe("notice");

    // A text to a permission says neither allow nor deny: refused, in the tool's terms, nothing written.
    const text = await mcp.session.call("answer", { name: "asks", question: "q1", text: "no" });
    expect(text.isError).toBe(true);
    expect(text.data.error).toMatchObject({
      code: "E_INPUT_INVALID",
      message: expect.stringMatching(
        /^asks q1 \(.*\): a permission is answered by allow or deny, not by a text$/,
      ),
      fix: expect.stringMatching(/^answer asks q1 with allow or deny \(and why/),
    });
    expect(fs.existsSync(path.join(d.dir, "questions", "q1.answer.json"))).toBe(false);
    const answered = await mcp.session.call("answer", { name: "asks", question: "q1", allow: true });
    expect(answered.isError, answered.text).toBe(false);
    expect(answered.text).toBe("asks q1: allowed");
    await waitFor("the first turn's end", () =>
      fs.existsSync(path.join(d.dir, "questions", "q1.delivered.json")) &&
      fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8").includes('"type":"result"')
        ? true
        : undefined,
    );
    const sent = await mcp.session.call("send", { name: "asks", text: "and now the docs" });
    expect(sent.isError, sent.text).toBe(false);
    expect(sent.text).toMatch(/^asks: message \d{8}T\d{9}Z-[0-9a-z]{6} queued$/);
    const id = (sent.data.sent as { id: string }).id;
    const receipt = path.join(d.dir, "inbox", `${id}.state.json`);
    await waitFor("the message acted on", () =>
      fs.existsSync(receipt) && readJson(receipt).state === "acted" ? true : undefined,
    );
    expect((await mcp.session.call("cancel", { name: "asks" })).isError).toBe(false);
    const recorded = await waitFor(
      "the record's notification",
      () => mcp.session.notices.find((n) => n.event === "recorded"),
      30_000,
    );
    expect(recorded).toMatchObject({ name: "asks", status: "cancelled" });
    // A question is notified once.
    expect(mcp.session.notices.filter((n) => n.event === "question")).toHaveLength(1);
  });

  it("refuses a message to a dispatch that is not steerable, in the tool's terms", async () => {
    const started = await mcp.session.call("dispatch", {
      backend: "claude-code",
      bin: FAKE_CLAUDE,
      name: "plain",
      brief: "[tool:30000] a long job",
    });
    const d = started.data.dispatched as { dispatchId: string; dir: string };
    mcp.dispatched.push(d.dispatchId);
    await waitFor(
      "it to run",
      () => (fs.existsSync(path.join(d.dir, "proc.json")) ? true : undefined),
      20_000,
    );
    const refused = await mcp.session.call("send", { name: "plain", text: "more" });
    expect(refused.isError).toBe(true);
    expect(refused.data.error).toMatchObject({ code: "E_NOT_STEERABLE" });
    expect((await mcp.session.call("cancel", { name: "plain" })).isError).toBe(false);
    await waitFor("its record", () => mcp.session.notices.find((n) => n.event === "recorded"), 30_000);
  });
});
