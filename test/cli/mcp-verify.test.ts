import { describe, expect, it } from "vitest";
import { fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { tempDir } from "../helpers/folders.js";
import { useInProcessSession } from "../helpers/mcp.js";

// The check through the MCP tools (specs/dispatch.md, "Checks and races"): dispatch takes `verify`,
// `verifyTimeout` and `verifyRepairs`; wait returns the record with its `verify`.

const mcp = useInProcessSession();

describe("a check through the MCP tools", () => {
  it("takes verify, verifyTimeout and verifyRepairs, and wait returns the check's verdict", async () => {
    const bins = tempDir();
    const codex = fakeCli(bins, "codex", [{ lines: recordedLines("codex", "text"), exit: 0 }]);
    const red = await mcp.session.call("dispatch", {
      backend: "codex",
      bin: codex,
      name: "red",
      brief: "fix it",
      verify: "echo '2 failing' >&2; exit 1",
      verifyTimeout: "2m",
      verifyRepairs: 0,
    });
    expect(red.isError, red.text).toBe(false);
    mcp.dispatched.push((red.data.dispatched as { dispatchId: string }).dispatchId);
    const waited = await mcp.session.call("wait", { names: ["red"], timeoutS: 60 }, 90_000);
    expect(waited.data).toMatchObject({
      records: [
        {
          name: "red",
          status: "failed",
          error: { kind: "verify", tail: ["2 failing"] },
          verify: { command: "echo '2 failing' >&2; exit 1", passed: false, runs: [{ exitCode: 1 }] },
        },
      ],
    });
    const bad = await mcp.session.call("dispatch", {
      backend: "codex",
      bin: codex,
      brief: "b",
      verifyRepairs: 1,
    });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/verifyRepairs needs verify/);
  });
});
