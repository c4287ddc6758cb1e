import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { FAKE_CLAUDE, useSteeredDispatches } from "../helpers/steering.js";
import { waitForFile } from "../helpers/wait.js";

// A question its dispatch left open when it was cancelled (specs/steering.md, "What readers show"): it
// waits for nothing any more, and `show` says it was never answered, not until when it waits.

const steered = useSteeredDispatches();

describe("a question of a cancelled dispatch", () => {
  it("is shown never answered, not waiting for an answer until its deadline", async () => {
    const env = { ...isolatedHome().env, CATHERD_CLAUDE_BIN: FAKE_CLAUDE };
    const d = await steered.dispatch(env, "left", "[ask] run the tests", ["--on-question", "wait 10m"]);
    await waitForFile(path.join(d.dir, "questions", "q1.json"), 20_000);
    const before = await runCli(["show", "left"], { env });
    expect(before.stdout).toMatch(/waiting for an answer to q1 until /);

    expect((await runCli(["cancel", "left", "--wait"], { env })).code).toBe(0);
    const shown = await runCli(["show", "left"], { env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/q1 permission: .* — never answered: the dispatch ended first/);
    expect(shown.stdout).not.toMatch(/waiting for an answer/);
    const json = JSON.parse((await runCli(["show", "left", "--json"], { env })).stdout);
    expect(json.steering.waiting).toEqual([]);
    expect(json.steering.questions).toEqual([
      expect.objectContaining({ id: "q1", answer: null, waiting: false }),
    ]);
    expect(json.dispatch.record).toMatchObject({ status: "cancelled" });
  });
});
