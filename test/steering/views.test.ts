import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { Dispatched } from "../../src/cli/dispatch-command.js";
import type { Logs } from "../../src/cli/logs-command.js";
import type { Sent } from "../../src/cli/send-command.js";
import type { ShownDispatch } from "../../src/cli/show-command.js";
import type { StatusData } from "../../src/cli/status-command.js";
import type { Waited } from "../../src/cli/wait-command.js";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/folders.js";
import { FAKE_CLAUDE, useSteeredDispatches } from "../helpers/steering.js";
import { waitFor } from "../helpers/wait.js";

// Every view shows a steerable dispatch's conversation (specs/cli.md: status, show, logs, wait): real
// processes, the stand-in for Claude Code's stream-json protocol (test/fixtures/fake-claude-stream.mjs)
// asking a permission ([ask]) that waits for a person (--on-question "wait 1m").

const steered = useSteeredDispatches();

describe("the views of a steerable dispatch", () => {
  it("status, show, logs (and --follow) and wait show its messages and the question it waits on", async () => {
    const { env: base } = isolatedHome();
    const env = {
      ...base,
      CATHERD_CLAUDE_BIN: FAKE_CLAUDE,
      FAKE_CLAUDE_LOG: path.join(tempDir(), "model.log"),
    };
    const cli = async (args: string[]) => {
      const r = await runCli(args, { env });
      if (r.code !== 0) throw new Error(`catherd ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
      return r.stdout;
    };
    const d = (
      JSON.parse(
        await cli([
          "dispatch",
          "--backend",
          "claude-code",
          "--name",
          "asker",
          "--brief",
          "[ask] run the tests",
          "--steerable",
          "--on-question",
          "wait 1m",
          "--json",
        ]),
      ) as Dispatched
    ).dispatched;
    steered.track(d.dispatchId, d.supervisorPid);
    await waitFor(
      "the permission asked",
      () => (fs.existsSync(path.join(d.dir, "questions", "q1.json")) ? true : undefined),
      20_000,
    );
    const sent = (JSON.parse(await cli(["send", "asker", "also update the docs", "--json"])) as Sent).sent;
    expect(sent.id).not.toBeNull();

    // status: the row waits for an answer.
    const status = JSON.parse(await cli(["status", "--json"])) as StatusData;
    const row = status.dispatches.find((r) => r.dispatchId === d.dispatchId);
    expect(row).toMatchObject({ questions: 1, asking: { id: "q1", kind: "permission" } });
    expect(row?.messages).toEqual({ queued: 1, delivered: 0, acted: 0, failed: 0 });
    expect(await cli(["status"])).toMatch(/asks: q1 /);

    // show: the messages and the question, waiting.
    const shown = JSON.parse(await cli(["show", "asker", "--json"])) as ShownDispatch;
    expect(shown.steering?.waiting.map((q) => q.id)).toEqual(["q1"]);
    expect(shown.steering?.messages.map((m) => m.id)).toEqual([sent.id]);
    expect(Array.isArray(shown.dispatch.conversation)).toBe(true); // the turns, as before
    const showText = await cli(["show", "asker"]);
    expect(showText).toMatch(/\nsteering\n/);
    expect(showText).toMatch(/q1 permission: .* — waiting for an answer until \d{4}-/);
    expect(showText).toMatch(/queued .*: also update the docs/);

    // logs --follow, from now to the record: the answer and the message's states come as they happen.
    const follow = runCli(["logs", "asker", "--follow"], { env });
    const logsNow = (JSON.parse(await cli(["logs", "asker", "--json"])) as Logs).lines;
    expect(logsNow.some((l) => /^\? q1 asks \d\d:\d\d:\d\d \(permission\): /.test(l))).toBe(true);
    expect(logsNow.some((l) => /^» message …\w{6} queued .*: also update the docs$/.test(l))).toBe(true);

    // wait, meanwhile, changes nothing: it times out and says the agent asks.
    const early = await runCli(["wait", "asker", "--timeout", "1s", "--json"], { env });
    expect(early.code).toBe(124);
    const snapshot = (JSON.parse(early.stdout) as Waited).running[0];
    expect(snapshot).toMatchObject({ questions: 1, asking: { id: "q1" } });
    expect(fs.existsSync(path.join(d.dir, "questions", "q1.answer.json"))).toBe(false);

    await cli(["answer", "asker", "q1", "--allow"]);
    const waited = JSON.parse(await cli(["wait", "asker", "--json"])) as Waited;
    expect(waited.records[0]?.steering).toMatchObject({
      messages: { acted: 1, failed: 0 },
      questions: { asked: 1, answered: 1, byPolicy: 0, unanswered: 0 },
    });
    expect(await cli(["wait", "asker"])).toMatch(
      /\n {2}steering: 1 message \(1 acted\), 1 question \(1 answered, 0 by policy\)/,
    );

    const followed = await follow;
    expect(followed.code).toBe(0);
    const lines = followed.stdout.split("\n");
    const index = (re: RegExp) => lines.findIndex((l) => re.test(l));
    expect(index(/^\? q1 asks /)).toBeGreaterThanOrEqual(0);
    expect(index(/^\? q1 allowed \d\d:\d\d:\d\d by catherd answer/)).toBeGreaterThan(index(/^\? q1 asks /));
    expect(index(/^» message …\w{6} acted /)).toBeGreaterThan(index(/^» message …\w{6} queued /));

    // Read again once recorded: the lines are in time order among the events, each once.
    const after = (await cli(["logs", "asker"])).split("\n");
    const asks = after.findIndex((l) => /^\? q1 asks /.test(l));
    const allowed = after.findIndex((l) => /^\? q1 allowed /.test(l));
    const delivered = after.findIndex((l) => /^» message …\w{6} delivered /.test(l));
    expect(asks).toBeGreaterThanOrEqual(0);
    expect(allowed).toBeGreaterThan(asks);
    expect(delivered).toBeGreaterThan(allowed);
    expect(after.filter((l) => /^\? q1 allowed /.test(l))).toHaveLength(1);
    // A recorded row counts from the record; nothing asks any more.
    const end = JSON.parse(await cli(["status", "--json"])) as StatusData;
    expect(end.dispatches[0]).toMatchObject({ questions: 0, asking: null, messages: { acted: 1 } });
    expect(await cli(["show", "asker"])).toMatch(
      /q1 permission: .* — allowed by catherd answer \(pid \d+\) at /,
    );
  });

  it("a dispatch not started steerable has no conversation in any view", async () => {
    const { env: base } = isolatedHome();
    const env = { ...base, CATHERD_CLAUDE_BIN: FAKE_CLAUDE };
    const r = await runCli(
      ["dispatch", "--backend", "claude-code", "--name", "plain", "--brief", "hi", "--json"],
      {
        env,
      },
    );
    const d = (JSON.parse(r.stdout) as Dispatched).dispatched;
    steered.track(d.dispatchId, d.supervisorPid);
    const waited = JSON.parse((await runCli(["wait", "plain", "--json"], { env })).stdout) as Waited;
    expect(waited.records[0]?.steering).toBeUndefined();
    const status = JSON.parse((await runCli(["status", "--json"], { env })).stdout) as StatusData;
    expect(status.dispatches[0]).toMatchObject({ questions: null, messages: null, asking: null });
    const shown = JSON.parse((await runCli(["show", "plain", "--json"], { env })).stdout) as ShownDispatch;
    expect(shown.steering).toBeNull();
    const logs = (await runCli(["logs", "plain"], { env })).stdout;
    expect(logs).not.toMatch(/^(» message|\? q)/m);
  });
});
