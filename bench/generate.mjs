// Writes recorded dispatch folders straight to disk, laid out as specs/dispatch-folder.md says, so that the
// read side can be measured over 1000 dispatches without running 1000 agents.
import * as fs from "node:fs";
import * as path from "node:path";

/** Writes `count` recorded dispatch folders straight to disk, as specs/dispatch-folder.md lays them out. */
export function generateRecorded(home, count, { run = "default", workDir, events: eventsFile }) {
  const runDir = path.join(home, "runs", run);
  const mkdir = (d) => fs.mkdirSync(d, { recursive: true, mode: 0o700 });
  const write = (file, text) => fs.writeFileSync(file, text, { mode: 0o600 });
  const json = (file, value) => write(file, `${JSON.stringify(value, null, 2)}\n`);
  mkdir(path.join(runDir, "dispatches"));
  mkdir(path.join(runDir, "live"));
  if (!fs.existsSync(path.join(runDir, "run.json"))) {
    json(path.join(runDir, "run.json"), {
      schema: 1,
      id: run,
      createdAt: new Date(Date.now() - 3_600_000).toISOString(),
      maxParallel: null,
    });
  }
  const events = fs.readFileSync(eventsFile, "utf8");
  const names = Math.max(1, Math.round(count / 10));
  const base = Date.now() - 3_600_000; // an hour ago: all within a day, all unread → status lists every one
  for (let i = 0; i < count; i++) {
    const name = `gen-${String(i % names).padStart(3, "0")}`;
    const at = new Date(base + i * 1000);
    const ended = new Date(at.getTime() + 42_000);
    const suffix = (i + 36 ** 5).toString(36).slice(-6);
    const id = `${at
      .toISOString()
      .replace(/[-:]/g, "")
      .replace(/\.\d+Z$/, "Z")}-${suffix}`;
    const dir = path.join(runDir, "dispatches", name, id);
    mkdir(dir);
    write(path.join(dir, "brief.md"), "Make npm test pass\n");
    json(path.join(dir, "spec.json"), {
      schema: 1,
      dispatchId: id,
      backend: "codex",
      cmd: "/usr/bin/codex",
      args: ["exec", "--json", "--skip-git-repo-check", "-"],
      env: {},
      cwd: workDir,
      stdinPath: "brief.md",
      idleMs: 900000,
      wallMs: 5400000,
      stallMs: 450000,
      killGraceMs: 10000,
      graceAfterFinalMs: 30000,
      pollMs: 250,
      providerRetry: { attempts: 3, windowMs: 180000 },
    });
    json(path.join(dir, "admit.json"), {
      schema: 1,
      dispatchId: id,
      run,
      name,
      backend: "codex",
      model: null,
      cwd: workDir,
      owns: [],
      admittedAt: at.toISOString(),
      dispatcher: { pid: 12345, startTime: "100" },
      git: null,
    });
    json(path.join(dir, "supervisor.json"), {
      schema: 1,
      pid: 12346,
      startTime: "101",
      startedAt: at.toISOString(),
    });
    json(path.join(dir, "proc.json"), {
      schema: 1,
      pid: 12347,
      pgid: 12347,
      startTime: "102",
      startedAt: at.toISOString(),
      argv0: "/usr/bin/codex",
    });
    write(path.join(dir, "events.jsonl"), events);
    write(path.join(dir, "stderr.log"), "");
    json(path.join(dir, "thread.json"), {
      schema: 1,
      thread: "0199a213-81c0-7800-8aa1-bbab2a035a53",
      at: at.toISOString(),
    });
    json(path.join(dir, "activity.json"), {
      schema: 1,
      at: ended.toISOString(),
      lastEvent: "turn completed",
      lastEventAt: ended.toISOString(),
      openToolCalls: [],
      retrying: 0,
      retries: 0,
      tokens: { input: 20000, cached: 15000, output: 300 },
      thread: "0199a213-81c0-7800-8aa1-bbab2a035a53",
    });
    json(path.join(dir, "exit.json"), {
      schema: 1,
      reason: "exited",
      code: 0,
      signal: null,
      startedAt: at.toISOString(),
      endedAt: ended.toISOString(),
      durationMs: 42000,
      pid: 12347,
      sawFinal: true,
      thread: "0199a213-81c0-7800-8aa1-bbab2a035a53",
      openToolCalls: [],
      retries: 0,
      lastEventAt: ended.toISOString(),
      stalled: false,
      stop: { term: false, kill: false, swept: 0 },
      error: null,
    });
    write(path.join(dir, "reply.md"), "Done: the tests pass.\n");
    json(path.join(dir, "record.json"), {
      schema: 1,
      dispatchId: id,
      run,
      name,
      backend: "codex",
      model: null,
      status: "ok",
      reason: "exited",
      exitCode: 0,
      signal: null,
      startedAt: at.toISOString(),
      endedAt: ended.toISOString(),
      secs: 42,
      thread: "0199a213-81c0-7800-8aa1-bbab2a035a53",
      tokens: { input: 20000, cached: 15000, output: 300 },
      costUsd: null,
      reply: "Done: the tests pass.",
      replyPath: path.join(dir, "reply.md"),
      changedFiles: null,
      error: null,
    });
    write(
      path.join(dir, "supervisor.log"),
      `{"at":"${at.toISOString()}","event":"recorded","status":"ok"}\n`,
    );
    write(path.join(runDir, "dispatches", name, "latest"), `${id}\n`);
  }
  return runDir;
}
