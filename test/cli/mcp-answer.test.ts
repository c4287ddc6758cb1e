import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { calls, fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { tempDir } from "../helpers/folders.js";
import { useInProcessSession } from "../helpers/mcp.js";

// The answer through the MCP tools (specs/mcp.md, "An answer that fits a schema"): dispatch takes the
// schema inline as `answerSchema`; wait and result return the record as structuredContent, its `answer`
// the parsed value. A fake codex plays what the real one prints, its final message a JSON answer.

const mcp = useInProcessSession();

const SCHEMA = {
  type: "object",
  properties: { files: { type: "array", items: { type: "string" } } },
  required: ["files"],
};

describe("an answer through the MCP tools", () => {
  it("takes the schema inline and returns the answer in wait's and result's structured content", async () => {
    const bins = tempDir();
    const lines = recordedLines("codex", "text").map((l) =>
      l.replace('"text":"Hello from mockllm."', `"text":${JSON.stringify('{"files": ["a.ts", "b.ts"]}')}`),
    );
    const codex = fakeCli(bins, "codex", [{ lines, exit: 0 }]);
    const answer = await mcp.session.call("dispatch", {
      backend: "codex",
      bin: codex,
      name: "files",
      brief: "which files?",
      answerSchema: SCHEMA,
      repair: 0,
    });
    expect(answer.isError, answer.text).toBe(false);
    const d = answer.data.dispatched as { dispatchId: string; dir: string };
    mcp.dispatched.push(d.dispatchId);
    // The folder keeps the schema as given; codex is handed it by --output-schema.
    expect(JSON.parse(fs.readFileSync(path.join(d.dir, "answer-schema.json"), "utf8"))).toEqual(SCHEMA);

    const waited = await mcp.session.call("wait", { names: ["files"], timeoutS: 60 }, 90_000);
    expect(waited.data).toMatchObject({
      records: [{ name: "files", status: "ok", answer: { files: ["a.ts", "b.ts"] }, answerErrors: null }],
    });
    const result = await mcp.session.call("result", { name: "files" });
    expect(result.isError).toBe(false);
    expect(result.data).toMatchObject({ answer: { files: ["a.ts", "b.ts"] } });
    expect(calls(bins, "codex")[0]).toEqual(
      expect.arrayContaining(["--output-schema", path.join(d.dir, "answer-schema.json")]),
    );
  });

  it("answers a schema that is not one with a tool error in the tool's terms, and writes nothing", async () => {
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [{ lines: [], exit: 0 }]);
    const bad = await mcp.session.call("dispatch", {
      backend: "codex",
      bin: codex,
      brief: "b",
      answerSchema: { type: "objekt" },
    });
    expect(bad.isError).toBe(true);
    expect(bad.data.error).toMatchObject({
      code: "E_INPUT_INVALID",
      message: expect.stringMatching(
        /^answerSchema is not a valid JSON Schema \(draft 2020-12\): data\/type/,
      ),
    });
    const notObject = await mcp.session.call("dispatch", {
      backend: "codex",
      bin: codex,
      brief: "b",
      answerSchema: "x",
    });
    expect(notObject).toMatchObject({ isError: true, data: { error: { code: "E_INPUT_INVALID" } } });
    expect(fs.existsSync(path.join(process.env.CATHERD_HOME ?? "", "runs"))).toBe(false);
    expect(calls(bins, "codex")).toHaveLength(0);
  });
});
