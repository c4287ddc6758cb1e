import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { INITIAL_PID_NAMESPACE, ownPidNamespace, sightOf } from "../../src/infra/namespaced-process.js";
import { startTimeOf } from "../../src/infra/process-identity.js";
import { resolveExecutable } from "../../src/infra/which.js";
import { waitFor } from "../helpers/wait.js";

// A process named by its pid in its own PID namespace (a sandbox's `catherd lock`), judged from here.

const bwrap = resolveExecutable("bwrap", process.env.PATH ?? "");

describe("sightOf", () => {
  it("judges a process of this namespace by pid and start time", () => {
    const here = { pid: process.pid, startTime: startTimeOf(process.pid), pidNs: ownPidNamespace() };
    expect(sightOf(here)).toBe("alive");
    expect(sightOf({ ...here, pidNs: null })).toBe("alive");
    expect(sightOf({ ...here, startTime: "1" })).toBe("dead");
  });

  it("calls a namespace no process shows ended from the initial namespace, and unseen from any other", () => {
    const gone = { pid: 2, startTime: "1", pidNs: "pid:[1]" };
    expect(sightOf(gone, INITIAL_PID_NAMESPACE)).toBe("dead");
    expect(sightOf(gone, "pid:[2]")).toBe("unseen");
  });

  it.skipIf(bwrap === null || ownPidNamespace() !== INITIAL_PID_NAMESPACE)(
    "finds a process of a namespace below by its pid there, and calls it dead once it ends",
    async () => {
      const child = spawn(
        bwrap as string,
        [
          "--ro-bind",
          "/",
          "/",
          "--dev",
          "/dev",
          "--proc",
          "/proc",
          "--unshare-user",
          "--die-with-parent",
          "--unshare-pid",
          "--",
          "/bin/sh",
          "-c",
          'echo "$$ $(readlink /proc/self/ns/pid) $(cut -d" " -f22 /proc/$$/stat)"; exec sleep 30',
        ],
        { stdio: ["ignore", "pipe", "ignore"] },
      );
      try {
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString();
        });
        const line = await waitFor("the process inside to name itself", () =>
          out.includes("\n") ? out : undefined,
        );
        const [pid, pidNs, startTime] = line.trim().split(" ");
        const inside = { pid: Number(pid), startTime: startTime ?? null, pidNs: pidNs ?? null };
        expect(inside.pidNs).not.toBe(ownPidNamespace());
        expect(sightOf(inside)).toBe("alive");
        expect(sightOf({ ...inside, startTime: "1" })).toBe("dead");
        expect(sightOf({ ...inside, pid: inside.pid + 100 })).toBe("dead");
        child.kill("SIGKILL");
        await new Promise((resolve) => child.once("exit", resolve));
        await waitFor("the namespace to end", () => (sightOf(inside) === "dead" ? true : undefined));
      } finally {
        child.kill("SIGKILL");
      }
    },
  );
});
