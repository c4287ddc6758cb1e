import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/folders.js";
import { SANDBOX_PROBE } from "../helpers/sandbox.js";
import {
  checkPrerequisites,
  diagnostics,
  type LiveCli,
  LiveRun,
  leftovers,
  waitForRecord,
} from "./harness.js";
import { FINAL_MARKER, startMockModelServer } from "./mock-model-server.js";

// The four real CLIs inside `--sandbox files+net` (specs/sandbox.md; specs/live-suite.md, "Inside the sandbox"): the
// mock model's loopback port allowed and nothing else; each runs its shell tool on a command that reads
// a planted secret (hidden) and asks for a host the sandbox refuses (logged, counted in the record), and
// finishes its contract: a tool call, then an answer.

const CLIS_IN_SANDBOX: readonly LiveCli[] = ["codex", "claude", "gemini", "opencode"];

describe.each(CLIS_IN_SANDBOX)("%s inside --sandbox files+net", (cli) => {
  let run: LiveRun;

  beforeEach(async () => {
    checkPrerequisites(cli);
    run = new LiveRun(await startMockModelServer());
  });

  afterEach(async (context) => {
    const failed = context.task.result?.state === "fail";
    const killed = await run.reap(failed);
    if (failed)
      for (const d of run.dispatches) process.stderr.write(`kept ${d.root} (killed ${killed} at reap)\n`);
  });

  it("finishes a tool call and its answer; the planted secret stays hidden and the refused host is in the record", async () => {
    const secretDir = tempDir("catherd-live-secret-");
    const secret = `planted-${cli}-${Date.now()}`;
    fs.writeFileSync(path.join(secretDir, "id_test"), `${secret}\n`);
    const port = new URL(run.server.baseUrl("sandbox")).port;
    const refused = "http://127.0.0.1:9/refused";
    const d = await run.dispatch(cli, "sandbox", {
      idle: "90s",
      flags: [
        "--sandbox",
        "files+net",
        "--allow-net",
        `127.0.0.1:${port}`,
        "--deny-read",
        secretDir,
        "--env",
        `SANDBOX_SECRET_FILE=${path.join(secretDir, "id_test")}`,
        "--env",
        `SANDBOX_PROBE=${SANDBOX_PROBE}`,
        "--env",
        `SANDBOX_REFUSED_URL=${refused}`,
      ],
    });
    const { record } = await waitForRecord(d, 150_000);
    const why = diagnostics(d, run.server);
    expect(record.status, why).toBe("ok");
    expect(record.reply ?? "", why).toContain(FINAL_MARKER);
    expect(record.reply ?? "", why).toContain("sandbox-done");
    const sandbox = (record as unknown as { sandbox: { mode: string; denied: number } }).sandbox;
    expect(sandbox.mode, why).toBe("files+net");
    expect(sandbox.denied, why).toBeGreaterThanOrEqual(1);
    const log = fs.readFileSync(path.join(d.dir, "sandbox.log"), "utf8");
    expect(log, why).toContain('"host":"127.0.0.1","port":9');
    for (const entry of fs.readdirSync(d.dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const file = path.join(entry.parentPath, entry.name);
      expect(fs.readFileSync(file, "latin1").includes(secret), `${file} holds the secret\n${why}`).toBe(
        false,
      );
    }
    expect(leftovers(d), why).toEqual([]);
  });
});
