import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchedOf, fakeDispatchArgs, isolatedHome, runCli } from "../helpers/cli.js";
import { readJson, reapAll, tempDir } from "../helpers/folders.js";
import { fakeDispatch } from "../helpers/mcp.js";
import { rawServer, reapServers, stdioSession, watchesInode } from "../helpers/mcp-stdio.js";
import { isAlive } from "../helpers/processes.js";
import { waitFor, waitForFile, waitForJson } from "../helpers/wait.js";

// catherd mcp as a real process on stdio (dist/bin/catherd.js mcp): the SDK's client, the server's
// lifecycle (stdin closing, signals, a client gone mid-call) and what it leaves behind.

/**
 * The server's exit must come this soon after stdin closing or a signal: specs/mcp.md's second, with room
 * for a loaded machine (a server that waits for anything — a pipe, a timer — misses it by far more).
 */
const EXIT_WITHIN_MS = 10_000;

const dispatched: string[] = [];
afterEach(() => {
  expect(reapServers(), "catherd mcp servers left running").toBe(0);
  expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
});

function scenario(steps: Record<string, unknown>[]): string {
  const file = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(file, JSON.stringify({ steps }));
  return file;
}

describe("catherd mcp over stdio", () => {
  it("serves the tools to the SDK's client, and its dispatches get the server's environment", async () => {
    const { env } = isolatedHome();
    const session = await stdioSession({ ...env, PROBE_OF_THE_SERVER_ENV: "from-the-server" });
    try {
      const { version } = JSON.parse(
        fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
      ) as { version: string };
      expect(session.client.getServerVersion()).toEqual({ name: "catherd", version });
      const { tools } = await session.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        "answer",
        "cancel",
        "dispatch",
        "doctor",
        "logs",
        "result",
        "send",
        "show",
        "status",
        "usage",
        "wait",
      ]);
      const answer = await session.call("dispatch", {
        backend: "exec",
        name: "probe",
        args: ["/bin/sh", "-c", 'echo "probe=$PROBE_OF_THE_SERVER_ENV"'],
      });
      expect(answer.isError, answer.text).toBe(false);
      const d = (answer.data as { dispatched: { dispatchId: string; dir: string } }).dispatched;
      dispatched.push(d.dispatchId);
      const waited = await session.call("wait", { names: ["probe"], timeoutS: 30 });
      expect(waited.data).toMatchObject({ records: [{ name: "probe", status: "ok" }], running: [] });
      expect((await session.call("logs", { name: "probe" })).data).toMatchObject({
        lines: ["probe=from-the-server"],
      });
      expect((await session.call("result", { name: "probe" })).data).toMatchObject({
        dispatchId: d.dispatchId,
        status: "ok",
      });
      const notice = await waitFor("the logging notification", () => session.notices[0], 20_000);
      expect(notice).toMatchObject({ event: "recorded", name: "probe", status: "ok", reply: null });
      // The admission names the server as the dispatcher.
      expect(readJson(path.join(d.dir, "admit.json"))).toMatchObject({ dispatcher: { pid: session.pid } });
    } finally {
      await session.close();
    }
  });

  it("exits within a second when its stdin closes, its dispatch left running and then recorded", async () => {
    const { env } = isolatedHome();
    const server = await rawServer(env);
    const go = path.join(tempDir(), "go");
    const started = path.join(tempDir(), "started");
    server.send({
      id: 1,
      method: "tools/call",
      params: {
        name: "dispatch",
        arguments: fakeDispatch("survivor", [
          { touch: started },
          { waitFor: go },
          { out: "done" },
          { exit: 0 },
        ]),
      },
    });
    const answer = (await server.receive((m) => m.id === 1)) as {
      result: { structuredContent: { dispatched: { dispatchId: string; dir: string } } };
    };
    const d = answer.result.structuredContent.dispatched;
    dispatched.push(d.dispatchId);
    await waitForFile(started, 20_000);

    const closedAt = Date.now();
    server.child.stdin.end();
    const exit = await server.exited;
    expect(exit.code).toBe(0);
    expect(exit.at - closedAt).toBeLessThan(EXIT_WITHIN_MS);

    const status = JSON.parse((await runCli(["status", "--json"], { env })).stdout) as {
      dispatches: { name: string; state: string }[];
    };
    expect(status.dispatches).toMatchObject([{ name: "survivor", state: "running" }]);
    fs.writeFileSync(go, "");
    expect(await waitForJson(path.join(d.dir, "record.json"), 20_000)).toMatchObject({ status: "ok" });
  });

  it("exits within a second on SIGTERM (143) and on SIGINT (130), its dispatch left running and then recorded", async () => {
    const { env } = isolatedHome();
    for (const [signal, code] of [
      ["SIGTERM", 143],
      ["SIGINT", 130],
    ] as const) {
      const server = await rawServer(env);
      const go = path.join(tempDir(), "go");
      const started = path.join(tempDir(), "started");
      const name = `survivor-${signal.toLowerCase()}`;
      server.send({
        id: 1,
        method: "tools/call",
        params: {
          name: "dispatch",
          arguments: fakeDispatch(name, [{ touch: started }, { waitFor: go }, { exit: 0 }]),
        },
      });
      const answer = (await server.receive((m) => m.id === 1)) as {
        result: { structuredContent: { dispatched: { dispatchId: string; dir: string } } };
      };
      const d = answer.result.structuredContent.dispatched;
      dispatched.push(d.dispatchId);
      await waitForFile(started, 20_000);

      const sentAt = Date.now();
      server.child.kill(signal);
      const exit = await server.exited;
      expect(exit.code, signal).toBe(code);
      expect(exit.at - sentAt, signal).toBeLessThan(EXIT_WITHIN_MS);
      const status = JSON.parse((await runCli(["status", "--json"], { env })).stdout) as {
        dispatches: { name: string; state: string }[];
      };
      expect(
        status.dispatches.find((r) => r.name === name),
        signal,
      ).toMatchObject({ state: "running" });
      fs.writeFileSync(go, "");
      expect(await waitForJson(path.join(d.dir, "record.json"), 20_000), signal).toMatchObject({
        status: "ok",
        reason: "exited",
      });
    }
  });

  it("survives a client that disconnects mid-call: it exits, no dispatch is lost, no process is left", async () => {
    const { env } = isolatedHome();
    const go = path.join(tempDir(), "go");
    const cli = await runCli(
      fakeDispatchArgs(scenario([{ out: "working" }, { waitFor: go }, { exit: 0 }]), ["--name", "long"]),
      { env },
    );
    const d = dispatchedOf(cli);
    dispatched.push(d.dispatchId);

    const session = await stdioSession(env);
    const call = session.call("wait", { names: ["long"], timeoutS: 120 }).then(
      () => "answered",
      () => "failed",
    );
    // The wait is in flight once the server watches the dispatch's folder.
    await waitFor("the server to watch the folder", () =>
      watchesInode(session.pid, d.dir) ? true : undefined,
    );
    const closedAt = Date.now();
    await session.close(); // ends the server's stdin, as a client that goes does
    await waitFor("the server to exit", () => (isAlive(session.pid) ? undefined : Date.now()), 5000).then(
      (at) => expect(at - closedAt).toBeLessThan(EXIT_WITHIN_MS),
    );
    expect(await call).toBe("failed");

    fs.writeFileSync(go, "");
    expect(await waitForJson(path.join(d.dir, "record.json"), 20_000)).toMatchObject({
      status: "ok",
      reason: "exited",
    });
  });

  it("finishes a dispatch in flight when the client goes: admitted and started, never left half-made", async () => {
    const { env } = isolatedHome();
    const server = await rawServer(env);
    const go = path.join(tempDir(), "go");
    server.send({
      id: 1,
      method: "tools/call",
      params: { name: "dispatch", arguments: fakeDispatch("in-flight", [{ waitFor: go }, { exit: 0 }]) },
    });
    // Cut the pipe as soon as admission has written admit.json, while the call is still unanswered.
    const admit = await waitFor(
      "admit.json",
      () => {
        const names = path.join(env.CATHERD_HOME as string, "runs", "default", "dispatches", "in-flight");
        const id = fs.existsSync(names) ? fs.readdirSync(names).find((f) => f !== "latest") : undefined;
        const file = id === undefined ? null : path.join(names, id, "admit.json");
        return file !== null && fs.existsSync(file) ? file : undefined;
      },
      20_000,
    );
    const closedAt = Date.now();
    server.child.stdin.end();
    const dir = path.dirname(admit);
    dispatched.push(path.basename(dir));
    try {
      expect(server.received((m) => m.id === 1)).toBe(false);
      const exit = await server.exited;
      expect(exit.at - closedAt).toBeLessThan(EXIT_WITHIN_MS);
      await waitForJson(path.join(dir, "supervisor.json"), 20_000);
    } finally {
      // Whatever failed above, the agent is let go: it ends, and its record is written.
      fs.writeFileSync(go, "");
    }
    expect(await waitForJson(path.join(dir, "record.json"), 20_000)).toMatchObject({
      status: "ok",
      reason: "exited",
    });
  });
});
