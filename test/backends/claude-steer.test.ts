import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { claudeCodeBackend as claude } from "../../src/backends/claude-code.js";
import { ROOT } from "../helpers/folders.js";
import { planRequest } from "./recorded.js";

// Claude Code's stream-json input protocol (specs/backends.md, "Session protocols"), against what Claude
// Code 2.1.197 printed when driven with it against a mock model: test/fixtures/recorded/claude-steer/
// <run>.in.jsonl is what was written to its stdin, <run>.out.jsonl what it printed.

const DIR = path.join(ROOT, "test/fixtures/recorded/claude-steer");
const lines = (run: string, side: "in" | "out") =>
  fs
    .readFileSync(path.join(DIR, `${run}.${side}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
const objects = (run: string, side: "in" | "out") =>
  lines(run, side).map((l) => JSON.parse(l) as Record<string, unknown>);
const steer = claude.steer;
if (steer === undefined) throw new Error("claude-code must be steerable");

describe("claude-code's plan, steerable", () => {
  it("reads stream-json input with echoes on the channel; with questions, asks catherd", () => {
    const plain = claude.plan(planRequest({ steer: { questions: false } }));
    expect(plain.stdin).toBe("channel");
    expect(plain.args).toEqual(
      expect.arrayContaining(["--input-format", "stream-json", "--replay-user-messages"]),
    );
    expect(plain.args).not.toContain("--permission-prompt-tool");
    const asking = claude.plan(planRequest({ steer: { questions: true } }));
    expect(asking.args.join(" ")).toContain("--permission-prompt-tool stdio");
    expect(claude.plan(planRequest()).stdin).toBe("brief");
  });
});

describe("claude-code's stream, read while steering", () => {
  it("takes each echo of a user line as the CLI taking that message: the brief, then the one sent mid-tool", () => {
    const facts = lines("midtool-replay", "out").map((l) => claude.parse(l));
    expect(facts.filter((f) => f.taken !== undefined).map((f) => f.taken)).toEqual([
      "11111111-1111-4111-8111-111111111111",
      "22222222-2222-4222-8222-222222222222",
    ]);
    // The tool's result is a user line too, but no echo: it closes the tool call.
    expect(facts.some((f) => f.toolsClosed?.includes("toolu_m1") === true && f.taken === undefined)).toBe(
      true,
    );
    // Each echo starts the reply afresh: the reply is what the agent says after the last message.
    for (const f of facts.filter((x) => x.taken !== undefined))
      expect(f.reply).toEqual({ text: "", mode: "replace" });
  });

  it("reads an interrupted turn's result as an error final (steering takes it out), and control responses as no work", () => {
    const facts = lines("interrupt", "out").map((l) => claude.parse(l));
    const finals = facts.filter((f) => f.final !== undefined).map((f) => f.final?.isError);
    expect(finals).toEqual([true, false, false]);
    const responses = objects("interrupt", "out")
      .map((event, i) => ({ event, facts: facts[i] }))
      .filter(({ event }) => event.type === "control_response");
    expect(responses.length).toBe(4);
    for (const { facts: f } of responses) expect(f).toEqual({ progress: false });
  });

  it("turns each can_use_tool ask into a question with the request id its answer must carry", () => {
    const asks = lines("permission", "out")
      .map((l) => claude.parse(l).asks)
      .filter((a) => a !== undefined);
    const requested = objects("permission", "out")
      .filter((e) => e.type === "control_request")
      .map((e) => e.request_id);
    expect(asks.map((a) => a?.request.requestId)).toEqual(requested);
    expect(asks[0]).toMatchObject({ kind: "permission", tool: "Bash" });
    expect(asks[0]?.asks).toContain("touch /home/dev/project/allow_full.txt");
  });
});

describe("claude-code's lines to the channel", () => {
  const lines = steer.session({ args: [], env: {} });

  it("a user message: the shape Claude took, with the uuid it skips when seen again", () => {
    const line = JSON.parse(
      lines.userLines("fix it", "11111111-1111-4111-8111-111111111111")?.[0] ?? "",
    ) as Record<string, unknown>;
    const recorded = objects("midtool-replay", "in")[0] ?? {};
    expect(Object.keys(line).sort()).toEqual(Object.keys(recorded).sort());
    expect(line).toMatchObject({
      type: "user",
      message: { role: "user" },
      uuid: "11111111-1111-4111-8111-111111111111",
    });
  });

  it("an interrupt and the end of a session, as control requests", () => {
    expect(JSON.parse(lines.interruptLines("req_int_1")?.[0] ?? "")).toEqual(objects("interrupt", "in")[1]);
    const end = JSON.parse(steer.endLine?.("e1") ?? "null") as Record<string, unknown>;
    expect(end).toEqual({ type: "control_request", request_id: "e1", request: { subtype: "end_session" } });
  });

  it("an allow carries the input as asked (updatedInput), a deny its message: as the answers Claude ran and refused", () => {
    const sent = objects("permission", "in").filter((e) => e.type === "control_response");
    const asked = objects("permission", "out").filter((e) => e.type === "control_request");
    const input = (asked[0]?.request as { input: unknown } | undefined)?.input;
    const allow = JSON.parse(
      steer.responseLine({ requestId: asked[0]?.request_id }, input, { allow: true, text: null, why: null }),
    );
    expect(allow).toEqual(sent[0]);
    const deny = JSON.parse(
      steer.responseLine(
        { requestId: asked[4]?.request_id },
        {},
        { allow: false, text: null, why: "catherd says no" },
      ),
    );
    expect(deny).toEqual(sent[4]);
  });

  it("answers AskUserQuestion with answers keyed by the question, from a text or a JSON object", () => {
    const input = { questions: [{ question: "Which database?" }, { question: "Which port?" }] };
    const one = JSON.parse(
      steer.responseLine({ requestId: "r" }, input, { allow: true, text: "sqlite", why: null }),
    );
    expect(one.response.response.updatedInput.answers).toEqual({ "Which database?": "sqlite" });
    const both = JSON.parse(
      steer.responseLine({ requestId: "r" }, input, {
        allow: true,
        text: '{"Which database?":"postgres","Which port?":"5432"}',
        why: null,
      }),
    );
    expect(both.response.response.updatedInput.answers).toEqual({
      "Which database?": "postgres",
      "Which port?": "5432",
    });
  });
});
