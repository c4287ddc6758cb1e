import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/wait.js";
import {
  dispatchSteered,
  killAndAdopt,
  pausedAt,
  readMore,
  receipt,
  recordedOk,
  requests,
  seen,
  send,
  steeredHome,
} from "./codex-steered.js";
import { trial, useFaultKit } from "./kit.js";

// Rows 16f and 16g: a steerable codex whose supervisor is SIGKILLed after writing a request and before
// codex answered it, so that its adopter finds no answer in the backlog (specs/steering.md, "codex: what an
// adopter may conclude"). The stand-in holds the request unanswered (FAKE_CODEX_HOLD) until the adopter has
// written its first line to the channel — whatever it is — and the trial then lets it answer: the model
// must see the message once (16f), and codex start one thread (16g).

useFaultKit();

/** The answer of catherd's request `id` is in the stream. */
const answered = (dir: string, id: string) =>
  fs.readFileSync(path.join(dir, "events.jsonl"), "utf8").includes(`"id":"${id}"`);

describe("row 16f, codex: killed after writing a turn/steer, before codex answered it", () => {
  it("the adopter waits for codex's word on it and does not give it again: seen once, acted", async () => {
    const t = trial("16f codex: supervisor SIGKILLed after writing a turn/steer, before its answer");
    const hold = path.join(t.dir(), "release");
    const s = steeredHome(t, {
      CATHERD_TEST_ONLY_PAUSE_AT: "message-written",
      FAKE_CODEX_HOLD: "turn/steer",
      FAKE_CODEX_HOLD_UNTIL: hold,
    });
    // The command runs until a message is steered into its turn.
    const d = await dispatchSteered(t, s, "codex-steer-held", "[tool:wait] work");
    await waitFor("the brief to be taken", () => (seen(s).length === 1 ? true : undefined), 30_000);
    const id = await send(s, "codex-steer-held", "also the docs", {
      ...s.env,
      CATHERD_TEST_ONLY_PAUSE_AT: "",
    });
    const killed = await pausedAt(d.dir, "message-written");
    const steer = await waitFor("the steer read", () => {
      const at = requests(s).findIndex((r) => r.method === "turn/steer");
      return at === -1 ? undefined : { at, id: String(requests(s)[at]?.id) };
    });
    const adopter = await killAndAdopt(t, s, d, killed);
    await readMore(s, steer.at + 1, "the adopter's first line");
    expect(answered(d.dir, steer.id), "codex answered the steer before the adopter wrote").toBe(false);
    fs.writeFileSync(hold, "");
    await recordedOk(d, adopter);
    expect(
      seen(s).map((m) => m.text),
      "what the model saw",
    ).toEqual(["[tool:wait] work", "also the docs"]);
    expect(receipt(d.dir, id)?.state).toBe("acted");
    t.note(`the adopter's first line: ${JSON.stringify(requests(s)[steer.at + 1])}`);
    t.pass();
  });
});

describe("row 16g, codex: killed after writing the opening, before thread/start's answer", () => {
  it.each([
    ["before codex read it", "initialize"],
    ["after codex read it, before thread/start's answer", "thread/start"],
  ])("(%s) the adopter does not open a second thread; the brief goes once", async (when, held) => {
    const t = trial(`16g codex: supervisor SIGKILLed after writing the opening, ${when}`);
    const hold = path.join(t.dir(), "release");
    const s = steeredHome(t, {
      CATHERD_TEST_ONLY_PAUSE_AT: "handshake-written",
      FAKE_CODEX_HOLD: held,
      FAKE_CODEX_HOLD_UNTIL: hold,
    });
    const d = await dispatchSteered(t, s, "codex-open-held", "work");
    const killed = await pausedAt(d.dir, "handshake-written");
    const opening = await waitFor("the opening read", () => {
      const at = requests(s).findIndex((r) => r.method === "thread/start");
      return at === -1 ? undefined : at;
    });
    if (held === "thread/start") {
      await waitFor("the opening's initialize answered", () =>
        answered(d.dir, "initialize") ? true : undefined,
      );
    }
    const adopter = await killAndAdopt(t, s, d, killed);
    await readMore(s, opening + 1, "the adopter's first line");
    expect(answered(d.dir, "thread"), "codex answered thread/start before the adopter wrote").toBe(false);
    fs.writeFileSync(hold, "");
    await recordedOk(d, adopter);
    const starts = requests(s).filter((r) => r.method === "thread/start" || r.method === "thread/resume");
    expect(starts.length, `threads opened: ${JSON.stringify(requests(s))}`).toBe(1);
    expect(
      seen(s).map((m) => m.text),
      "what the model saw",
    ).toEqual(["work"]);
    t.note(`the adopter's first line: ${JSON.stringify(requests(s)[opening + 1])}`);
    t.pass();
  });
});
