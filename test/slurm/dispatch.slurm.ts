import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, inject, it } from "vitest";
import { readJob } from "../../src/engines/slurm/job.js";
import { jobPhase } from "../../src/engines/slurm/states.js";
import { type CliResult, isolatedHome, runCli } from "../helpers/cli.js";
import { fakeCli, recordedLines } from "../helpers/fake-cli.js";
import { FAKE_AGENT, ROOT, readJson, reapAll, tempDir } from "../helpers/folders.js";
import { stdioSession } from "../helpers/mcp-stdio.js";
import { otherNamespaceUnavailable, runInOtherNamespace } from "../helpers/other-namespace.js";
import { isAlive, killPid } from "../helpers/processes.js";
import { waitForJson } from "../helpers/wait.js";
import { eventually, untilJob } from "./poll.js";

// `catherd dispatch --placement slurm` end to end on the real one-node cluster (test/slurm/cluster.setup.ts,
// licenses codex:1, claude-code:2, gemini:3): the real CLI, the real engine, the folder the only channel
// between them (specs/placement.md). Independent cases run at once: each has its own home, and the
// licenses they use are their own.

const provided = inject("slurm");
const cluster = "cluster" in provided ? provided.cluster : null;
const otherNamespace = otherNamespaceUnavailable();

interface Dispatched {
  dispatchId: string;
  dir: string;
  name: string;
  supervisorPid: number | null;
  placement: { engine: string; jobId: string; state: "queued" | "running"; reason: string | null } | null;
}

/** A home of its own, whose commands find the cluster (SLURM_CONF and its mark travel with every job). */
function home(extra: Record<string, string> = {}) {
  const { home, env } = isolatedHome();
  return { home, env: { ...env, ...cluster?.env, ...extra } };
}

function jsonOf<T>(result: CliResult, what: string): T {
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}: ${result.stderr}${result.stdout}`);
  return JSON.parse(result.stdout) as T;
}

async function dispatch(env: NodeJS.ProcessEnv, args: string[]): Promise<Dispatched> {
  const result = await runCli(["dispatch", "--json", "--placement", "slurm", "--memory", "256M", ...args], {
    env,
    timeoutMs: 60_000,
  });
  return jsonOf<{ dispatched: Dispatched }>(result, "dispatch").dispatched;
}

/** A fake agent on `exec` running `steps`. */
function execArgs(steps: Record<string, unknown>[]): string[] {
  const scenario = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(scenario, JSON.stringify({ steps }));
  return ["--backend", "exec", "--kill-grace", "300ms", "--", process.execPath, FAKE_AGENT, scenario];
}

/**
 * A fake agent CLI for a backend the cluster licenses: it notes in `log` when it starts and ends (its
 * dispatch's id and the time), prints a recorded Claude Code answer, and ends once `release` exists.
 */
function licensedCli(dir: string): { bin: string; log: string; release: string } {
  const bin = path.join(dir, "fake-licensed-cli");
  const log = path.join(dir, "agents.log");
  const release = path.join(dir, "release");
  const lines = fs.readFileSync(path.join(ROOT, "test/fixtures/recorded/claude/text.jsonl"), "utf8");
  fs.writeFileSync(
    bin,
    `#!${process.execPath}
const fs = require("node:fs");
if (process.argv[2] === "--version") { console.log("99.0.0 (fake)"); process.exit(0); }
const note = (what) => fs.appendFileSync(${JSON.stringify(log)}, \`\${process.env.CATHERD_DISPATCH} \${what} \${Date.now()}\\n\`);
note("start");
process.stdout.write(${JSON.stringify(lines)});
const look = () => { if (fs.existsSync(${JSON.stringify(release)})) { note("end"); process.exit(0); } setTimeout(look, 50); };
look();
`,
    { mode: 0o755 },
  );
  return { bin, log, release };
}

/** The most agents the log shows alive at once. */
function mostAtOnce(log: string): number {
  const events = fs
    .readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map((line) => {
      const [, what, at] = line.split(" ");
      return { delta: what === "start" ? 1 : -1, at: Number(at) };
    })
    // An end and a start in the same millisecond: the end first (the later job got the freed license).
    .sort((a, b) => a.at - b.at || a.delta - b.delta);
  let alive = 0;
  let most = 0;
  for (const e of events) {
    alive += e.delta;
    most = Math.max(most, alive);
  }
  return most;
}

const starts = (log: string) =>
  fs.existsSync(log)
    ? fs
        .readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l.includes(" start ")).length
    : 0;

interface Row {
  dispatchId: string;
  state: string;
  status: string | null;
  queue: { blockedBy: string; engine?: { name: string; jobId: string; reason: string } } | null;
}

async function statusRows(env: NodeJS.ProcessEnv, runner = runCli): Promise<Row[]> {
  const result = await runner(["status", "--json"], { env, timeoutMs: 60_000 });
  return jsonOf<{ dispatches: Row[] }>(result, "status").dispatches;
}

describe.skipIf(cluster === null).concurrent("dispatch --placement slurm on a real cluster", () => {
  if (cluster === null) return;
  const slurmEnv = { ...process.env, ...cluster.env };

  it("runs ten agents as Slurm jobs, never more at once than the backend's license, and waits for them from here", async ({
    expect,
  }) => {
    const cli = licensedCli(tempDir());
    const { env } = home({ CATHERD_CLAUDE_BIN: cli.bin });
    const ids: string[] = [];
    try {
      const all = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          dispatch(env, [
            "--backend",
            "claude-code",
            "--name",
            `agent-${i}`,
            "--brief",
            "go",
            "--kill-grace",
            "300ms",
          ]),
        ),
      );
      for (const d of all) ids.push(d.dispatchId);
      for (const d of all) {
        expect(d.supervisorPid).toBeNull();
        expect(d.placement).toMatchObject({
          engine: "slurm",
          state: expect.stringMatching(/^(queued|running)$/),
        });
        expect(readJson(path.join(d.dir, "placement.json"))).toMatchObject({
          engine: "slurm",
          jobId: d.placement?.jobId,
        });
      }
      // Two hold the two claude-code licenses; the eight others wait in the engine's queue.
      await eventually("two agents running", () => (starts(cli.log) === 2 ? true : undefined), 60_000);
      const rows = await eventually(
        "the others queued in slurm, one at least for Licenses",
        async () => {
          const rows = (await statusRows(env)).filter((r) => r.state === "queued");
          return rows.length === 8 && rows.some((r) => r.queue?.engine?.reason === "Licenses")
            ? rows
            : undefined;
        },
        60_000,
      );
      for (const row of rows) {
        expect(row.queue).toMatchObject({
          blockedBy: "engine",
          engine: { name: "slurm", reason: expect.any(String) },
        });
      }
      const pending = all.find((d) => d.dispatchId === rows[0]?.dispatchId) as Dispatched;
      const shown = jsonOf<{ dispatch: { state: string; queue: Row["queue"] } }>(
        await runCli(["show", pending.dir, "--json"], { env }),
        "show",
      ).dispatch;
      expect(shown).toMatchObject({
        state: "queued",
        queue: { blockedBy: "engine", engine: { name: "slurm" } },
      });
      const mcp = await stdioSession(env);
      try {
        const answer = await mcp.call("status", {});
        const mcpRows = (answer.data as { dispatches: Row[] }).dispatches;
        expect(mcpRows.find((r) => r.dispatchId === pending.dispatchId)).toMatchObject({
          state: "queued",
          queue: { blockedBy: "engine", engine: { name: "slurm" } },
        });
      } finally {
        await mcp.close();
      }
      expect(starts(cli.log)).toBe(2);

      fs.writeFileSync(cli.release, "");
      const waited = jsonOf<{ records: { dispatchId: string; status: string }[] }>(
        await runCli(["wait", "--json", ...all.map((d) => d.name)], { env, timeoutMs: 180_000 }),
        "wait",
      );
      expect(waited.records.map((r) => r.status)).toEqual(Array(10).fill("ok"));
      expect(mostAtOnce(cli.log)).toBe(2);
      const result = jsonOf<{ status: string }>(
        await runCli(["result", all[0]?.name ?? "", "--json"], { env }),
        "result",
      );
      expect(result.status).toBe("ok");
      // Each ran as a job of its own, named for its run and dispatch, on the cluster's node.
      for (const d of all) {
        expect(readJson(path.join(d.dir, "placement.json"))).toMatchObject({ node: cluster.node });
        const job = await readJob(d.placement?.jobId ?? "", { env: slurmEnv });
        expect(job.kind === "known" && job.job).toMatchObject({
          name: `catherd.default.${d.dispatchId}`,
          node: cluster.node,
        });
      }
      expect((await statusRows(env)).map((r) => r.status)).toEqual(Array(10).fill("ok"));
    } finally {
      fs.writeFileSync(cli.release, "");
      expect(reapAll(ids), "processes left running").toBe(0);
    }
  });

  it("cancels a job pending in the engine at once, and a running one through its supervisor", async ({
    expect,
  }) => {
    const cli = licensedCli(tempDir());
    const { env } = home({ CATHERD_CODEX_BIN: cli.bin });
    const ids: string[] = [];
    try {
      const running = await dispatch(env, ["--backend", "codex", "--name", "holder", "--brief", "go"]);
      ids.push(running.dispatchId);
      await eventually("the holder's agent", () => (starts(cli.log) === 1 ? true : undefined), 60_000);
      const pending = await dispatch(env, ["--backend", "codex", "--name", "waiter", "--brief", "go"]);
      ids.push(pending.dispatchId);
      expect(pending.placement).toMatchObject({ state: "queued" });
      await eventually("the waiter pending for Licenses", async () => {
        const row = (await statusRows(env)).find((r) => r.dispatchId === pending.dispatchId);
        return row?.queue?.engine?.reason === "Licenses" ? true : undefined;
      });

      const cancelled = jsonOf<{ cancelled: { state: string; status: string } }>(
        await runCli(["cancel", "waiter", "--json"], { env, timeoutMs: 60_000 }),
        "cancel",
      ).cancelled;
      expect(cancelled).toEqual(expect.objectContaining({ state: "recorded", status: "cancelled" }));
      expect(readJson(path.join(pending.dir, "record.json"))).toMatchObject({
        status: "cancelled",
        reason: "cancelled",
        error: {
          kind: "cancelled",
          engine: { name: "slurm", jobId: pending.placement?.jobId, state: "CANCELLED" },
          message: expect.stringMatching(new RegExp(`^slurm job ${pending.placement?.jobId} CANCELLED`)),
        },
      });
      expect(fs.existsSync(path.join(pending.dir, "supervisor.json"))).toBe(false);
      const job = await readJob(pending.placement?.jobId ?? "", { env: slurmEnv });
      expect(job.kind === "known" && job.job).toMatchObject({ state: "CANCELLED", node: null });

      const stopped = jsonOf<{ cancelled: { state: string; status: string } }>(
        await runCli(["cancel", "holder", "--wait", "--json"], { env, timeoutMs: 60_000 }),
        "cancel --wait",
      ).cancelled;
      expect(stopped).toEqual(expect.objectContaining({ state: "recorded", status: "cancelled" }));
      expect(readJson(path.join(running.dir, "record.json"))).toMatchObject({ reason: "cancelled" });
      expect(starts(cli.log)).toBe(1);
    } finally {
      fs.writeFileSync(cli.release, "");
      expect(reapAll(ids), "processes left running").toBe(0);
    }
  });

  it("records an scancel from outside once, as cancelled, in the engine's words", async ({ expect }) => {
    const { env } = home();
    const d = await dispatch(env, execArgs([{ out: "working" }, { hang: true }]));
    try {
      await waitForJson(path.join(d.dir, "proc.json"), 60_000);
      await promisify(execFile)("scancel", [d.placement?.jobId ?? ""], { env: slurmEnv });
      const record = await waitForJson(path.join(d.dir, "record.json"), 60_000);
      expect(record).toMatchObject({
        status: "cancelled",
        reason: "cancelled",
        error: {
          kind: "cancelled",
          engine: {
            name: "slurm",
            jobId: d.placement?.jobId,
            state: "CANCELLED",
            words: expect.stringMatching(
              new RegExp(`^slurm: JOB ${d.placement?.jobId} ON \\S+ CANCELLED AT \\S+$`),
            ),
          },
        },
      });
      // Once the job has ended its supervisor has said all it will: one record, by it.
      await untilJob(
        d.placement?.jobId ?? "",
        "ended",
        (r) => r.kind === "known" && jobPhase(r.job.state) === "ended",
        slurmEnv,
      );
      const log = fs.readFileSync(path.join(d.dir, "supervisor.log"), "utf8");
      expect(log.match(/"event":"recorded"/g)).toHaveLength(1);
    } finally {
      expect(reapAll([d.dispatchId]), "processes left running").toBe(0);
    }
  });

  it.skipIf(otherNamespace !== null)(
    "is judged from another PID and UTS namespace by its lock, then its engine, and never signalled from there",
    async ({ expect }) => {
      const { env } = home();
      const d = await dispatch(env, execArgs([{ out: "working" }, { hang: true }]));
      try {
        const supervisor = await waitForJson(path.join(d.dir, "supervisor.json"), 60_000);
        const proc = await waitForJson(path.join(d.dir, "proc.json"), 60_000);
        const rowThere = async () =>
          (await statusRows(env, runInOtherNamespace)).find((r) => r.dispatchId === d.dispatchId);
        // Its lock is fresh: running.
        expect(await rowThere()).toMatchObject({ state: "running" });
        // Its lock's last refresh a minute ago: the engine says the job runs, so it does.
        const lock = path.join(d.dir, "supervisor.lock");
        const minuteAgo = new Date(Date.now() - 60_000);
        fs.utimesSync(lock, minuteAgo, minuteAgo);
        expect(await rowThere()).toMatchObject({ state: "running" });
        expect(isAlive(supervisor.pid as number) && isAlive(proc.pid as number)).toBe(true);
        expect(fs.existsSync(path.join(d.dir, "exit.json"))).toBe(false);
        // The supervisor and its agent die without a word: the job ends, and the reader there records
        // it from the engine's words once the engine says so.
        killPid(supervisor.pid as number);
        killPid(proc.pid as number);
        fs.utimesSync(lock, minuteAgo, minuteAgo);
        const recorded = await eventually(
          "the record, by the reader in the other namespace",
          async () => ((await rowThere())?.state === "recorded" ? true : undefined),
          60_000,
        );
        expect(recorded).toBe(true);
        expect(readJson(path.join(d.dir, "record.json"))).toMatchObject({
          status: "lost",
          error: {
            code: "E_SUPERVISOR_LOST",
            engine: {
              name: "slurm",
              jobId: d.placement?.jobId,
              state: expect.stringMatching(/^(FAILED|CANCELLED)$/),
            },
          },
        });
      } finally {
        expect(reapAll([d.dispatchId]), "processes left running").toBe(0);
      }
    },
  );

  it("submits a dispatch that waited in the run's queue once its promoter starts it", async ({ expect }) => {
    const { env } = home();
    const go = path.join(tempDir(), "go");
    const first = await dispatch(env, ["--max-parallel", "1", ...execArgs([{ waitFor: go }, { exit: 0 }])]);
    const queued = await dispatch(env, ["--queue", ...execArgs([{ out: "second" }, { exit: 0 }])]);
    try {
      expect(queued.placement).toBeNull();
      expect(fs.existsSync(path.join(queued.dir, "placement.json"))).toBe(false);
      fs.writeFileSync(go, "");
      // The first supervisor's promoter, on the node, submits the second to Slurm.
      const placement = await waitForJson(path.join(queued.dir, "placement.json"), 60_000);
      expect(placement).toMatchObject({ engine: "slurm", jobId: expect.stringMatching(/^\d+$/) });
      expect(await waitForJson(path.join(queued.dir, "record.json"), 60_000)).toMatchObject({ status: "ok" });
      expect(readJson(path.join(first.dir, "record.json"))).toMatchObject({ status: "ok" });
    } finally {
      fs.writeFileSync(go, "");
      expect(reapAll([first.dispatchId, queued.dispatchId]), "processes left running").toBe(0);
    }
  });

  it("leaves a local dispatch queued behind a job to a reader on its host, never starting it in the job", async ({
    expect,
  }) => {
    const { env } = home();
    const go = path.join(tempDir(), "go");
    const job = await dispatch(env, ["--max-parallel", "1", ...execArgs([{ waitFor: go }, { exit: 0 }])]);
    const local = jsonOf<{ dispatched: Dispatched }>(
      await runCli(["dispatch", "--json", "--queue", "--placement", "local", ...execArgs([{ exit: 0 }])], {
        env,
      }),
      "dispatch --queue",
    ).dispatched;
    try {
      fs.writeFileSync(go, "");
      // The job's supervisor records, and its promoter (started with --in-engine-job) ends.
      await waitForJson(path.join(job.dir, "record.json"), 60_000);
      await eventually("the job's promoter ended", () =>
        /"event":"promoter".*"ended":"exit code 0"/.test(
          fs.readFileSync(path.join(job.dir, "supervisor.log"), "utf8"),
        )
          ? true
          : undefined,
      );
      expect(fs.existsSync(path.join(local.dir, "promoted.json"))).toBe(false);
      // A reader here promotes it: it runs on this host.
      await runCli(["status"], { env });
      expect(await waitForJson(path.join(local.dir, "record.json"), 60_000)).toMatchObject({ status: "ok" });
      expect(readJson(path.join(local.dir, "promoted.json"))).toMatchObject({
        by: { pid: expect.any(Number) },
      });
    } finally {
      fs.writeFileSync(go, "");
      expect(reapAll([job.dispatchId, local.dispatchId]), "processes left running").toBe(0);
    }
  });

  it("leaves a chain's timed retry to the readers: the job's supervisor does not hold its job for the wait", async ({
    expect,
  }) => {
    const { env } = home();
    // A provider limit that resets in five minutes, within --retry-within 10m: a timed retry of the same CLI.
    const reset = new Date(Math.ceil(Date.now() / 1000) * 1000 + 300_000).toISOString().replace(".000Z", "Z");
    const limited = recordedLines("claude", "ratelimit-long").map((l) =>
      l.replace(/resets at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/, `resets at ${reset}`),
    );
    const claude = fakeCli(tempDir(), "claude", [{ lines: limited, exit: 1 }]);
    const first = await dispatch(env, [
      "--backend",
      "claude-code",
      "--name",
      "retried",
      "--bin",
      claude,
      "--brief",
      "b",
      "--retry-within",
      "10m",
    ]);
    const ids = [first.dispatchId];
    try {
      expect(first.placement).toMatchObject({ engine: "slurm" });
      expect(await waitForJson(path.join(first.dir, "record.json"), 60_000)).toMatchObject({
        status: "limit",
        next: { why: "retry" },
      });
      // The job ends with its supervisor, which left the wait to the readers rather than staying for it.
      await untilJob(
        String(first.placement?.jobId),
        "ended",
        (r) => r.kind === "forgotten" || (r.kind === "known" && jobPhase(r.job.state) === "ended"),
        env,
      );
      const log = fs.readFileSync(path.join(first.dir, "supervisor.log"), "utf8");
      expect(log).toMatch(/"event":"waiting-for-retry".*"left":"to readers/);
      const next = readJson(path.join(first.dir, "next.json")) as { dispatchId: string };
      ids.push(next.dispatchId);
      const retry = path.join(path.dirname(first.dir), next.dispatchId);
      expect(readJson(path.join(retry, "queued.json"))).toMatchObject({ blockedBy: "not-before" });
      expect(Date.parse(String(readJson(path.join(retry, "queued.json")).notBefore))).toBe(Date.parse(reset));
      // Not before its time: nobody has promoted or submitted it.
      for (const file of ["promoted.json", "placement.json"])
        expect(fs.existsSync(path.join(retry, file)), file).toBe(false);
      expect((await runCli(["cancel", "retried", "--wait", "--json"], { env, timeoutMs: 60_000 })).code).toBe(
        0,
      );
    } finally {
      expect(reapAll(ids), "processes left running").toBe(0);
    }
  });

  it("records a dispatch the engine refuses spawn-failed, in sbatch's words", async ({ expect }) => {
    const { env, home: h } = home();
    const result = await runCli(
      [
        "dispatch",
        "--json",
        "--placement",
        "slurm",
        "--slurm-opt=--partition=no-such-partition",
        ...execArgs([{ exit: 0 }]),
      ],
      { env, timeoutMs: 60_000 },
    );
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error).toMatchObject({
      code: "E_ENGINE_REFUSED",
      message: expect.stringContaining("Invalid partition name specified"),
    });
    const rows = await statusRows(env);
    expect(rows).toEqual([expect.objectContaining({ state: "recorded", status: "failed" })]);
    expect(fs.existsSync(path.join(h, "runs"))).toBe(true);
  });
});
