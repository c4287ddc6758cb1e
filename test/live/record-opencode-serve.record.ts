import * as fs from "node:fs";
import { afterAll, beforeAll, describe, it } from "vitest";
import { checkPrerequisites } from "./harness.js";
import { type MockModelServer, startMockModelServer } from "./mock-model-server.js";
import { BridgeRun, lineOf, servePlace, toolIs } from "./record-opencode-serve.js";

// Records test/fixtures/recorded/opencode-serve/ (record-opencode-serve.ts says how): run only by
// `npm run record:opencode-serve`, never by a suite, with CATHERD_RECORD_OPENCODE_SERVE naming the folder.
const OUT = process.env.CATHERD_RECORD_OPENCODE_SERVE;
if (OUT === undefined || OUT === "") {
  throw new Error(
    "CATHERD_RECORD_OPENCODE_SERVE=<folder> npm run record:opencode-serve: name the folder to write",
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

/** A message's op, with a fixed uuid per message so that the recordings read the same each time. */
const prompt = (n: number, text: string) => {
  const uuid = `0000000${n}-0000-8000-8000-00000000000${n}`;
  return { op: "prompt", id: `prompt:${uuid}`, uuid, text };
};

/** The id of the ask read at line `at`. */
const askId = (run: BridgeRun, at: number) =>
  String((run.messages()[at]?.properties as { id?: string } | undefined)?.id);

function started(scenario: string, args: string[] = []) {
  checkPrerequisites("opencode");
  const place = servePlace(server, scenario);
  roots.push(place.root);
  return { run: new BridgeRun(args, place), place };
}

describe("recording opencode serve through the bridge", () => {
  const out = OUT;

  it("a prompt mid-tool joins the turn after the tool's result", async () => {
    const { run, place } = started("steer");
    run.send(prompt(1, "Please RUN sleep 4; echo slept-four"));
    await run.next("the tool running", toolIs("running"));
    run.send(prompt(2, "mid-tool words"));
    // The same message again (an adopter's): the bridge gives it once.
    run.send(prompt(2, "mid-tool words"));
    await run.next("the turn's end", lineOf("bridge.idle"));
    await run.end();
    run.save(out, "steer-midtool", place.clean);
  });

  it("an abort mid-tool, then a redirect", async () => {
    const { run, place } = started("steer");
    run.send(prompt(1, "Please RUN sleep 60; echo never-printed"));
    await run.next("the tool running", toolIs("running"));
    run.send({ op: "abort", id: "interrupt-1" });
    run.send(prompt(2, "redirected words"));
    const first = await run.next("the aborted turn's end", lineOf("bridge.idle"));
    await run.next("the redirect's end", lineOf("bridge.idle"), first + 1);
    await run.end();
    run.save(out, "interrupt", place.clean);
  });

  it("a permission rejected with a message, then one allowed", async () => {
    const permission = JSON.stringify({ edit: "allow", bash: "ask", external_directory: "deny" });
    const { run, place } = started("steer", ["--permission", permission, "--asks"]);
    run.send(prompt(1, "Please RUN echo denied > denied.txt"));
    const ask = await run.next("the first ask", lineOf("permission.asked"));
    const first = askId(run, ask);
    run.send({
      op: "reply",
      id: `reply:${first}`,
      permission: first,
      reply: "reject",
      message: "not that file",
    });
    const idle = await run.next("the first turn's end", lineOf("bridge.idle"));
    run.send(prompt(2, "Please RUN echo allowed > allowed.txt"));
    const again = await run.next("the second ask", lineOf("permission.asked"), idle + 1);
    const second = askId(run, again);
    run.send({ op: "reply", id: `reply:${second}`, permission: second, reply: "once" });
    await run.next("the second turn's end", lineOf("bridge.idle"), again + 1);
    await run.end();
    run.save(out, "permission", place.clean);
  });

  it("an ask without --asks is rejected by the bridge", async () => {
    const permission = JSON.stringify({ bash: "ask" });
    const { run, place } = started("steer", ["--permission", permission]);
    run.send(prompt(1, "Please RUN echo asked > asked.txt"));
    await run.next("the turn's end", lineOf("bridge.idle"));
    await run.end();
    run.save(out, "no-asks", place.clean);
  });

  it("a follow-up in the same session, and a session that does not exist", async () => {
    const { run, place } = started("steer");
    run.send(prompt(1, "first words"));
    await run.next("the first turn's end", lineOf("bridge.idle"));
    await run.end();
    const session = String(run.messages().find(lineOf("bridge.session"))?.sessionID);
    const again = new BridgeRun(["--session", session], place);
    again.send(prompt(2, "follow-up words"));
    await again.next("the follow-up's end", lineOf("bridge.idle"));
    await again.end();
    again.save(out, "follow-up", place.clean);
    const bogus = new BridgeRun(["--session", "ses_0000000000000000000000bogus"], place);
    await bogus.next("the failure", lineOf("bridge.failed"));
    await bogus.exited;
    bogus.save(out, "bogus-session", place.clean);
  });

  for (const scenario of ["auth401", "model404", "context400"]) {
    it(`a provider failure: ${scenario}`, async () => {
      const { run, place } = started(scenario);
      run.send(prompt(1, "Say hello"));
      await run.next("the turn's end", lineOf("bridge.idle"));
      await run.end();
      run.save(out, scenario, place.clean);
    });
  }
});
