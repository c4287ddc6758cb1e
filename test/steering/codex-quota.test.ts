import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readJson } from "../helpers/folders.js";
import { dispatchStandIn, standIn, useSteeredDispatches } from "../helpers/steering.js";
import { waitForJson } from "../helpers/wait.js";

// A steerable codex keeps the account's windows its app-server reports (account/rateLimits/updated) in
// the dispatch folder's quota.json (specs/dispatch-folder.md), supervised for real on the stand-in for
// `codex app-server` (test/fixtures/fake-codex-app-server.mjs).

const steered = useSteeredDispatches();
const CODEX = { binEnv: "CATHERD_CODEX_BIN", file: "fake-codex-app-server.mjs", logEnv: "FAKE_CODEX_LOG" };

async function dispatch(name: string, extra: NodeJS.ProcessEnv = {}) {
  const s = standIn("codex", CODEX, extra);
  return dispatchStandIn(steered, s, { name, brief: "hi", extra: ["--steerable"] });
}

describe("quota.json of a steerable codex", () => {
  it("holds the primary window as last reported, in percent, minutes and an ISO reset", async () => {
    const d = await dispatch("quota", { FAKE_CODEX_PRIMARY_USED: "42" });
    const record = await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(record.status).toBe("ok");
    const quota = readJson(path.join(d.dir, "quota.json")) as {
      schema: number;
      windows: Record<string, unknown>[];
    };
    expect(quota.schema).toBe(1);
    expect(quota.windows).toHaveLength(1);
    expect(quota.windows[0]).toMatchObject({
      limit: "codex",
      window: "primary",
      usedPercent: 42,
      windowMinutes: 300,
    });
    const resetsIn = Date.parse(quota.windows[0]?.resetsAt as string) - Date.now();
    expect(resetsIn).toBeGreaterThan(3_000_000);
    expect(resetsIn).toBeLessThanOrEqual(3_601_000); // the reset is given in whole seconds
    expect(Number.isNaN(Date.parse(quota.windows[0]?.seenAt as string))).toBe(false);
  });

  it("is not written when the CLI reported no window (null snapshots, as against the mock model)", async () => {
    const d = await dispatch("none");
    await waitForJson(path.join(d.dir, "record.json"), 30_000);
    expect(() => readJson(path.join(d.dir, "quota.json"))).toThrow();
  });
});
