// @ts-check
// Writes dispatch folders straight to disk, laid out as specs/dispatch-folder.md says, so that the read side
// and admission can be measured over many dispatches without running that many agents.
import * as fs from "node:fs";
import * as path from "node:path";
import { procStat } from "./proc.mjs";

/** @param {string} dir */
const mkdir = (dir) => fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
/** @param {string} file @param {string} text */
const write = (file, text) => fs.writeFileSync(file, text, { mode: 0o600 });
/** @param {string} file @param {unknown} value */
const json = (file, value) => write(file, `${JSON.stringify(value, null, 2)}\n`);

/**
 * Writes `count` recorded dispatch folders straight to disk, as specs/dispatch-folder.md lays them out.
 * @param {string} home
 * @param {number} count
 * @param {{ run?: string, workDir: string, events: string }} options `events`: the events.jsonl to copy
 * @returns {string} the run's folder
 */
export function generateRecorded(home, count, { run = "default", workDir, events: eventsFile }) {
  const runDir = path.join(home, "runs", run);
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

/**
 * Writes `count` live dispatch folders (admit.json, spec.json, and supervisor.json and proc.json naming this
 * process, which is alive) and their markers in the run's live/ index: what admission inspects under its
 * lock for every live dispatch.
 * @param {string} home
 * @param {number} count
 * @param {{ run?: string, workDir: string, agent: string }} options `agent`: the spec's cmd
 */
export function generateLive(home, count, { run = "default", workDir, agent }) {
  const runDir = path.join(home, "runs", run);
  fs.mkdirSync(path.join(runDir, "live"), { recursive: true, mode: 0o700 });
  const me = { pid: process.pid, startTime: procStat(process.pid)?.startTime ?? "" };
  const now = new Date().toISOString();
  for (let i = 0; i < count; i++) {
    const name = `live-${i}`;
    const id = `${now.replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}-${(i + 36 ** 5).toString(36).slice(-6)}`;
    const dir = path.join(runDir, "dispatches", name, id);
    mkdir(dir);
    json(path.join(dir, "spec.json"), {
      schema: 1,
      dispatchId: id,
      backend: "exec",
      cmd: agent,
      args: [],
      env: {},
      cwd: workDir,
      stdinPath: null,
      idleMs: 600000,
      wallMs: 600000,
      stallMs: 300000,
      killGraceMs: 10000,
      graceAfterFinalMs: null,
      pollMs: 250,
      providerRetry: { attempts: 3, windowMs: 180000 },
    });
    json(path.join(dir, "admit.json"), {
      schema: 1,
      dispatchId: id,
      run,
      name,
      backend: "exec",
      model: null,
      cwd: workDir,
      owns: [`own-${i}/`],
      admittedAt: now,
      dispatcher: me,
      git: null,
    });
    json(path.join(dir, "supervisor.json"), { schema: 1, ...me, startedAt: now });
    json(path.join(dir, "proc.json"), { schema: 1, ...me, pgid: me.pid, startedAt: now, argv0: agent });
    fs.writeFileSync(
      path.join(runDir, "live", `${id}.json`),
      JSON.stringify({ schema: 1, dispatchId: id, name, dir, owns: [`${workDir}/own-${i}/`] }),
      { mode: 0o600 },
    );
  }
}
