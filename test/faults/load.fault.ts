import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, dispatchedOf, runCli } from "../helpers/cli.js";
import { fakeAgentFolder, readJson, startSupervisor } from "../helpers/folders.js";
import { isAlive } from "../helpers/processes.js";
import { waitFor } from "../helpers/wait.js";
import { CROWD, fdCount, heavy, homeFor, jsonOf, statusKb, type Trial, trial, useFaultKit } from "./kit.js";

// Row 11: load and soak on this two-core machine. Many chatty dispatches at once, a long run of short
// ones, and one supervisor watched for descriptor and memory growth over a long chatty run.

useFaultKit();

/** How many short dispatches the soak runs (CATHERD_FAULT_SOAK overrides; the figure goes in the row). */
const SOAK = Number(process.env.CATHERD_FAULT_SOAK ?? 1000);
const SOAK_BATCH = 10;

/** A cheap chatty agent: `lines` JSON lines, one every `everyMs`, and a stderr line every tenth. */
function perlChatter(lines: number, everyMs: number): string[] {
  const script = `$|=1; for my $i (0..${lines - 1}) { print "{\\"n\\":$i,\\"pad\\":\\"${"x".repeat(80)}\\"}\\n"; print STDERR "progress $i\\n" if $i % 10 == 0; select(undef,undef,undef,${everyMs / 1000}); }`;
  return ["--", "/usr/bin/perl", "-e", script];
}

async function dispatchMany(t: Trial, env: NodeJS.ProcessEnv, count: number, args: (i: number) => string[]) {
  const results = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      runCli(["dispatch", "--json", ...args(i)], { env, timeoutMs: 120_000 }),
    ),
  );
  const dispatched: { dispatchId: string; dir: string; supervisorPid: number }[] = [];
  const refused: CliResult[] = [];
  for (const r of results) {
    if (r.code === 0) {
      const d = dispatchedOf(r);
      t.dispatch(d.dispatchId);
      t.pid(d.supervisorPid);
      dispatched.push(d);
    } else refused.push(r);
  }
  return { dispatched, refused };
}

function recordOf(dir: string): Record<string, unknown> | null {
  try {
    return readJson(path.join(dir, "record.json"));
  } catch {
    return null;
  }
}

describe("row 11: load and soak", () => {
  it(`records all of ${CROWD} concurrent chatty dispatches, loses none, and leaves nothing running`, async () => {
    const t = trial(`11 ${CROWD} concurrent chatty dispatches`, { many: true });
    await heavy(t);
    const { env } = homeFor(t);
    const started = Date.now();
    const { dispatched, refused } = await dispatchMany(t, env, CROWD, (i) => [
      "--backend",
      "exec",
      "--name",
      `chatty-${i}`,
      "--kill-grace",
      "1s",
      ...perlChatter(250, 20),
    ]);
    const admitted = (Date.now() - started) / 1000;
    t.tally.tried = CROWD;
    expect(refused.map((r) => r.stdout + r.stderr)).toEqual([]);
    await waitFor(
      `${CROWD} records`,
      () => (dispatched.every((d) => fs.existsSync(path.join(d.dir, "record.json"))) ? true : undefined),
      180_000,
    );
    const total = (Date.now() - started) / 1000;
    const records = dispatched.map((d) => recordOf(d.dir));
    t.tally.lost = records.filter((r) => r === null || r.status === "lost").length;
    t.tally.passed = records.filter((r) => r?.status === "ok").length;
    for (const d of dispatched)
      await waitFor("supervisor exit", () => (isAlive(d.supervisorPid) ? undefined : true), 30_000);
    const lines = dispatched.map(
      (d) => fs.readFileSync(path.join(d.dir, "events.jsonl"), "utf8").split("\n").length - 1,
    );
    t.note(`all admitted in ${admitted.toFixed(1)} s, all recorded in ${total.toFixed(1)} s`);
    expect(lines.filter((n) => n !== 250)).toEqual([]);
    expect(records.filter((r) => r?.status !== "ok").map((r) => JSON.stringify(r?.error ?? null))).toEqual(
      [],
    );
  });

  it(`runs ${SOAK} short dispatches in batches of ${SOAK_BATCH}: all recorded, none lost, nothing left running`, async () => {
    const t = trial(`11 soak of ${SOAK} short dispatches (batches of ${SOAK_BATCH})`, { many: true });
    await heavy(t);
    const { env } = homeFor(t);
    const started = Date.now();
    let lost = 0;
    let ok = 0;
    const failures: string[] = [];
    for (let batch = 0; batch < SOAK / SOAK_BATCH; batch++) {
      const { dispatched, refused } = await dispatchMany(t, env, SOAK_BATCH, (i) => [
        "--backend",
        "exec",
        "--name",
        `s${batch}-${i}`,
        "--",
        "/bin/sh",
        "-c",
        `echo batch ${batch} item ${i}`,
      ]);
      t.tally.tried += SOAK_BATCH;
      for (const r of refused) failures.push(`refused: ${r.stdout}${r.stderr}`.slice(0, 300));
      await waitFor(
        `batch ${batch} recorded`,
        () => (dispatched.every((d) => fs.existsSync(path.join(d.dir, "record.json"))) ? true : undefined),
        60_000,
      );
      for (const d of dispatched) {
        const record = recordOf(d.dir);
        if (record?.status === "ok") ok += 1;
        else {
          lost += 1;
          failures.push(`${d.dir}: ${JSON.stringify(record)}`.slice(0, 300));
        }
      }
    }
    const secs = (Date.now() - started) / 1000;
    t.tally.passed = ok;
    t.tally.lost = lost;
    t.note(
      `${SOAK} in ${secs.toFixed(0)} s (${((secs / SOAK) * 1000).toFixed(0)} ms each, ${SOAK_BATCH} at a time)`,
    );
    // The run's status still answers, and every row is recorded.
    const status = await runCli(["status", "--all", "--json"], { env, timeoutMs: 60_000 });
    expect(status.code).toBe(0);
    const rows = (jsonOf(status) as { dispatches: { state: string }[] }).dispatches;
    expect(rows).toHaveLength(SOAK);
    expect(rows.filter((r) => r.state !== "recorded")).toEqual([]);
    expect(failures.slice(0, 5)).toEqual([]);
  });

  it("holds its file descriptors and memory flat while watching a chatty agent for 30 s", async () => {
    const t = trial("11 one supervisor over a 30 s chatty run: fds and RSS");
    await heavy(t);
    const parent = t.dir();
    const agent = path.join(parent, "agent.mjs");
    fs.writeFileSync(
      agent,
      `let n = 0;
const started = Date.now();
const out = (o) => process.stdout.write(JSON.stringify(o) + "\\n");
const timer = setInterval(() => {
  for (let k = 0; k < 5; k++, n++) {
    if (n % 200 === 0) out({ type: "thread.started", thread_id: "t" + Math.floor(n / 200) });
    out({ type: "item.started", item: { id: "c" + n, type: "command_execution", command: "make step " + n } });
    out({ type: "item.completed", item: { id: "c" + n, type: "command_execution", command: "make step " + n } });
    out({ type: "item.completed", item: { id: "m" + n, type: "agent_message", text: "step " + n + " done" } });
    if (n % 50 === 0) process.stderr.write("stderr line " + n + "\\n");
  }
  if (Date.now() - started > 30000) {
    out({ type: "turn.completed", usage: { input_tokens: n, output_tokens: n } });
    clearInterval(timer);
  }
}, 10);
`,
    );
    const { dir, id } = fakeAgentFolder(
      { steps: [] },
      { backend: "codex", cmd: process.execPath, args: [agent], pollMs: 100, graceAfterFinalMs: null },
      parent,
    );
    t.dispatch(id);
    const run = startSupervisor(dir);
    const pid = run.child.pid as number;
    t.pid(pid);
    const samples: { fds: number; rssKb: number }[] = [];
    const sampler = setInterval(() => {
      const fds = fdCount(pid);
      const rssKb = statusKb(pid, "VmRSS");
      if (fds !== null && rssKb !== null) samples.push({ fds, rssKb });
    }, 1000);
    try {
      await run.done;
    } finally {
      clearInterval(sampler);
    }
    expect(readJson(path.join(dir, "exit.json"))).toMatchObject({ reason: "exited", code: 0 });
    expect(samples.length).toBeGreaterThanOrEqual(25);
    const steady = samples.slice(3);
    const fds = steady.map((s) => s.fds);
    const third = Math.floor(steady.length / 3);
    const avg = (xs: { rssKb: number }[]) => xs.reduce((a, s) => a + s.rssKb, 0) / xs.length;
    const early = avg(steady.slice(0, third));
    const late = avg(steady.slice(-third));
    t.note(
      `fds ${Math.min(...fds)}-${Math.max(...fds)}, RSS ${Math.round(early / 1024)} MB early, ${Math.round(late / 1024)} MB late, ${samples.length} samples`,
    );
    // A leak grows with the run (one descriptor a poll would be hundreds); a sample may catch a file the
    // supervisor has open for a moment (an activity write, a lock refresh, a read of /proc) on a loaded
    // machine: the late third's median against the early third's, and a small bound on the spread.
    const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
    expect(medianOf(fds.slice(-third))).toBeLessThanOrEqual(medianOf(fds.slice(0, third)) + 1);
    expect(Math.max(...fds) - Math.min(...fds)).toBeLessThanOrEqual(6);
    expect(late).toBeLessThan(early + 30 * 1024);
    expect(readJson(path.join(dir, "record.json"))).toMatchObject({ status: "ok" });
    t.pass();
  });
});
