import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Turn } from "../../src/dispatch/follow-up/conversation.js";
import { isolatedHome } from "../helpers/cli.js";
import { calls, fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { reapAll, tempDir } from "../helpers/folders.js";
import { inProcessSession, type McpSession } from "../helpers/mcp.js";

// The MCP dispatch tool's `followUp` argument (specs/mcp.md): the flag --follow-up under its camelCase
// name, checked and refused as on the command line; result's `conversation` lists the turns.

const dispatched: string[] = [];
let session: McpSession;
const saved = {
  home: process.env.CATHERD_HOME,
  run: process.env.CATHERD_RUN,
  bin: process.env.CATHERD_CODEX_BIN,
};
let bins: string;

beforeEach(async () => {
  const { env } = isolatedHome();
  bins = tempDir();
  process.env.CATHERD_HOME = env.CATHERD_HOME;
  process.env.CATHERD_RUN = "";
  process.env.CATHERD_CODEX_BIN = fakeCli(bins, "codex", [
    { lines: recordedLines("codex", "text"), exit: 0 },
  ]);
  session = await inProcessSession();
});

afterEach(async () => {
  await session.close();
  for (const [key, value] of [
    ["CATHERD_HOME", saved.home],
    ["CATHERD_RUN", saved.run],
    ["CATHERD_CODEX_BIN", saved.bin],
  ] as const) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

async function dispatchAndWait(args: Record<string, unknown>): Promise<{ dispatchId: string; dir: string }> {
  const answer = await session.call("dispatch", args);
  expect(answer.isError, answer.text).toBe(false);
  const d = answer.data.dispatched as { dispatchId: string; dir: string };
  dispatched.push(d.dispatchId);
  const waited = await session.call("wait", { names: ["talk"], timeoutS: 60 }, 90_000);
  expect(waited.isError, waited.text).toBe(false);
  return d;
}

describe("the MCP dispatch tool's followUp", () => {
  it("continues the named dispatch's thread, and result's conversation lists both turns", async () => {
    const first = await dispatchAndWait({ backend: "codex", name: "talk", brief: "first" });
    const second = await dispatchAndWait({ followUp: "talk", brief: "second" });
    const admit = JSON.parse(fs.readFileSync(path.join(second.dir, "admit.json"), "utf8"));
    expect(admit.followUpOf).toBe(first.dispatchId);
    const argv = calls(bins, "codex");
    expect(argv[1]?.slice(0, 2)).toEqual(["exec", "resume"]);
    expect(argv[1]).toContain("01a2264d-a96b-7c23-b4e9-0484292c91b3");
    const answer = await session.call("result", { name: "talk", conversation: true });
    expect(answer.isError, answer.text).toBe(false);
    const turns = answer.data.conversation as Turn[];
    expect(turns.map((t) => [t.turn, t.dispatchId, t.brief])).toEqual([
      [1, first.dispatchId, "first"],
      [2, second.dispatchId, "second"],
    ]);
  }, 120_000);

  it("refuses a followUp with another backend as the command line does", async () => {
    await dispatchAndWait({ backend: "codex", name: "talk", brief: "first" });
    const answer = await session.call("dispatch", { followUp: "talk", backend: "gemini", brief: "more" });
    expect(answer.isError).toBe(true);
    expect(answer.text).toMatch(/E_INPUT_INVALID.*its thread is a codex thread/s);
  }, 120_000);
});
