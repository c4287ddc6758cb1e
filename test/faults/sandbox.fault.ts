import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { dispatchedOf, runCli } from "../helpers/cli.js";
import { readJson } from "../helpers/folders.js";
import { makeRepo } from "../helpers/git.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { SANDBOX_PROBE } from "../helpers/sandbox.js";
import { waitFor } from "../helpers/wait.js";
import { CROWD, heavy, homeFor, type Trial, trial, useFaultKit, waitGone } from "./kit.js";

// Row 17: the sandbox (specs/sandbox.md) under faults — its proxy's death with its supervisor's, and a crowd
// of sandboxed dispatches at once.

useFaultKit();

/** A loopback server answering `ok <n>`, closed after the trial. */
async function server(t: Trial): Promise<{ port: number; hits: () => number }> {
  let hits = 0;
  const s = http.createServer((_request, response) => {
    hits += 1;
    response.end(`ok ${hits}`);
  });
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  t.cleanup(async () => {
    s.closeAllConnections();
    await new Promise((resolve) => s.close(resolve));
  });
  return { port: (s.address() as AddressInfo).port, hits: () => hits };
}

async function dispatch(t: Trial, env: NodeJS.ProcessEnv, name: string, flags: string[], command: string) {
  const result = await runCli(
    [
      "dispatch",
      "--backend",
      "exec",
      "--name",
      name,
      "--json",
      "--kill-grace",
      "500ms",
      ...flags,
      "--",
      "/bin/sh",
      "-c",
      command,
    ],
    { env, timeoutMs: 120_000 },
  );
  // Under a crowd the CLI may say it did not wait for a stdin that ended late: a note, not an error.
  expect(result.stderr.replace(/^catherd: stdin was not read.*\n/m, ""), "dispatch printed an error").toBe(
    "",
  );
  expect(result.code).toBe(0);
  const d = dispatchedOf(result);
  t.dispatch(d.dispatchId);
  t.pid(d.supervisorPid);
  return d;
}

describe("row 17: the sandbox under faults", () => {
  it("17a: the supervisor (and its proxy) SIGKILLed mid-run: the adopter serves the agent's next connection", async () => {
    const t = trial("17a");
    const { env } = homeFor(t);
    const web = await server(t);
    const go = path.join(t.dir(), "go");
    const url = `http://127.0.0.1:${web.port}/`;
    const d = await dispatch(
      t,
      env,
      "sandboxed",
      ["--cwd", t.dir(), "--sandbox", "files+net", "--allow-net", `127.0.0.1:${web.port}`],
      `node ${SANDBOX_PROBE} "!proxy:${url}" && while [ ! -e ${go} ]; do sleep 0.05; done; node ${SANDBOX_PROBE} "!proxy:${url}"`,
    );
    // The agent's own word that the first answer came back, not the server's count: a request counted
    // there may still be on its way back through the proxy, which the kill would cut (the connections in
    // flight die with the supervisor: specs/sandbox.md, "Network"), and this row is about the next one.
    // An agent that fails of a cut request and ends unwatched is recorded lost, its sandbox gone with it
    // (row 17c).
    const events = path.join(d.dir, "events.jsonl");
    await waitFor("the first answer through the first supervisor's proxy", () =>
      fs.existsSync(events) && fs.readFileSync(events, "utf8").includes('"ok":true') ? true : undefined,
    );
    expect(web.hits()).toBe(1);
    const proc = readJson(path.join(d.dir, "proc.json")) as { pid: number; pgid: number };
    killPid(d.supervisorPid);
    await waitGone(d.supervisorPid);
    expect(isAlive(proc.pid), "the sandboxed agent outlives its supervisor").toBe(true);
    // The first reader adopts it; the adopter listens on the proxy's sockets again.
    const status = await runCli(["status"], { env });
    const folderText = (name: string) => {
      const file = path.join(d.dir, name);
      return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : `(no ${name})`;
    };
    await waitFor("the adopter to serve the sandbox again", () =>
      folderText("supervisor.log").includes('"sandbox-served-again"') ? true : undefined,
    ).catch((error: unknown) => {
      const seen = ["supervisor.log", "supervisor.out", "stderr.log", "events.jsonl", "fence-status.json"];
      throw new Error(
        [`${(error as Error).message}; status said: ${status.stdout}${status.stderr}`]
          .concat(seen.map((name) => `${name}:\n${folderText(name)}`))
          .join("\n"),
      );
    });
    const adopter = (readJson(path.join(d.dir, "supervisor.json")) as { pid: number }).pid;
    t.pid(adopter);
    fs.writeFileSync(go, "");
    const waited = await runCli(["wait", "sandboxed", "--timeout", "60s", "--json"], {
      env,
      timeoutMs: 70_000,
    });
    const record = (
      JSON.parse(waited.stdout) as { records: { status: string; sandbox: unknown; error: unknown }[] }
    ).records[0];
    const why = `${JSON.stringify(record?.error)}\n${fs.readFileSync(path.join(d.dir, "supervisor.log"), "utf8")}`;
    expect(record?.status, why).toBe("ok");
    expect(record?.sandbox).toMatchObject({ mode: "files+net", denied: 0 });
    expect(web.hits()).toBe(2);
    await waitGone(adopter, 30_000);
    const sandbox = readJson(path.join(d.dir, "fence.json")) as { socketDir: string };
    expect(fs.existsSync(sandbox.socketDir), "the proxy's sockets went with the last supervisor").toBe(false);
    t.pass();
  });

  it(`17b: ${CROWD} sandboxed dispatches at once, each in its own worktree: each writes only its own, the proxy holds`, async () => {
    const t = trial("17b", { many: true });
    await heavy(t);
    const { env } = homeFor(t);
    const web = await server(t);
    const repo = makeRepo(t.dir("catherd-fault-repo-"), { "a.txt": "a\n" });
    const started = Date.now();
    const dispatched = await Promise.all(
      Array.from({ length: CROWD }, (_, i) =>
        dispatch(
          t,
          env,
          `crowd-${i}`,
          ["--cwd", repo, "--worktree", "--sandbox", "files+net", "--allow-net", `127.0.0.1:${web.port}`],
          // What it sees of the worktrees folder (its own only), its own file written, a request served.
          `ls "$(dirname "$PWD")"; echo mine > own.txt && node ${SANDBOX_PROBE} "!proxy:http://127.0.0.1:${web.port}/"`,
        ),
      ),
    );
    t.tally.tried = CROWD;
    const failures: string[] = [];
    const waited = await runCli(["wait", "--timeout", "300s", "--json"], { env, timeoutMs: 320_000 });
    const records = (JSON.parse(waited.stdout) as { records: { status: string; dispatchId: string }[] })
      .records;
    t.note(`${CROWD} sandboxed dispatches recorded in ${Math.round((Date.now() - started) / 1000)} s`);
    for (const d of dispatched) {
      const record = records.find((r) => r.dispatchId === d.dispatchId);
      const eventsFile = path.join(d.dir, "events.jsonl");
      const events = fs.existsSync(eventsFile) ? fs.readFileSync(eventsFile, "utf8").split("\n") : [];
      const spec = readJson(path.join(d.dir, "spec.json")) as { worktree: { path: string } };
      const seen = events.filter((line) => line !== "" && !line.startsWith("{"));
      if (
        record?.status === "ok" &&
        seen.length === 1 &&
        seen[0] === path.basename(spec.worktree.path) &&
        fs.existsSync(path.join(spec.worktree.path, "own.txt")) &&
        fs.readFileSync(path.join(spec.worktree.path, "own.txt"), "utf8") === "mine\n"
      ) {
        t.tally.passed += 1;
      } else {
        if (record === undefined) t.tally.lost += 1;
        failures.push(
          `${d.name}: ${record?.status ?? "no record"}, saw ${JSON.stringify(seen)}, ${JSON.stringify((record as { error?: unknown } | undefined)?.error ?? null).slice(0, 600)}`,
        );
      }
    }
    if (failures.length > 0) t.note(`first failures: ${failures.slice(0, 3).join(" | ")}`);
    expect(t.tally.passed, failures.slice(0, 3).join("\n")).toBe(CROWD);
    expect(web.hits()).toBe(CROWD);
    for (const d of dispatched) await waitGone(d.supervisorPid, 60_000);
  });
});
