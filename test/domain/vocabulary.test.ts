import { describe, expect, it } from "vitest";
import { agentEnvironment, isScrubbed, isSecretName } from "../../src/domain/env.js";
import { CatherdError, exitCodeFor } from "../../src/domain/errors.js";
import { isValidId, makeDispatchId, requireId } from "../../src/domain/ids.js";
import { formatDuration, parseDuration } from "../../src/domain/text/duration.js";

describe("durations", () => {
  it.each([
    ["250ms", 250],
    ["90s", 90_000],
    ["15m", 900_000],
    ["1h30m", 5_400_000],
    ["1.5s", 1500],
    ["2d", 172_800_000],
  ])("parses %s as %d ms", (text, ms) => {
    expect(parseDuration("--idle", text)).toBe(ms);
  });

  it.each(["", "15", "-5m", "5 m", "m", "1h30", "0s", "31d", "9999h", "1e3s", "x".repeat(40)])(
    "refuses %j",
    (text) => {
      expect(() => parseDuration("--idle", text)).toThrow(CatherdError);
    },
  );

  it("formats for people", () => {
    expect([850, 42_000, 192_000, 3_900_000, 200_000_000].map(formatDuration)).toEqual([
      "850ms",
      "42s",
      "3m12s",
      "1h05m",
      "2d07h",
    ]);
  });
});

describe("ids", () => {
  it.each(["a", "fix-tests", "run.2", "A_b-9", "x".repeat(64)])("accepts %s", (id) =>
    expect(isValidId(id)).toBe(true),
  );
  it.each(["", "..", "a..b", "-a", ".a", "a/b", "a\0b", "x".repeat(65), "é"])("refuses %j", (id) =>
    expect(isValidId(id)).toBe(false),
  );

  it("names the field in its error, with a fix", () => {
    const error = (() => {
      try {
        requireId("--name", "a/b");
      } catch (e) {
        return e as CatherdError;
      }
    })();
    expect(error?.code).toBe("E_INPUT_INVALID");
    expect(error?.message).toContain("--name");
    expect(error?.fix).toContain("A-Z");
  });

  it("makes dispatch ids that sort by time and match the id pattern", () => {
    let n = 0;
    const random = () => (n++ % 36) / 36;
    const a = makeDispatchId(new Date("2026-11-29T08:15:30.123Z"), random);
    const b = makeDispatchId(new Date("2026-11-29T08:15:31Z"), random);
    expect(a).toBe("20261129T081530Z-012345");
    expect(isValidId(a) && a < b).toBe(true);
  });
});

describe("environment", () => {
  it("drops the orchestrator's ids and catherd's own variables but the home and the slot count, adds the markers", () => {
    const env = agentEnvironment(
      {
        PATH: "/bin",
        OPENAI_API_KEY: "k",
        CODEX_THREAD_ID: "t",
        CLAUDECODE: "1",
        CATHERD_RUN: "outer",
        CATHERD_HOME: "/h",
        CATHERD_LOCK_SLOTS: "2",
        CATHERD_TEST_ONLY_NO_CGROUP: "1",
        UNSET: undefined,
      },
      {
        overrides: { EXTRA: "1", PATH: "/opt/bin" },
        markers: { dispatchId: "d1", run: "r1", dir: "/h/runs/r1/dispatches/n/d1" },
      },
    );
    expect(env).toEqual({
      PATH: "/opt/bin",
      OPENAI_API_KEY: "k",
      CATHERD_HOME: "/h",
      CATHERD_LOCK_SLOTS: "2",
      EXTRA: "1",
      CATHERD_DISPATCH: "d1",
      CATHERD_DISPATCH_DIR: "/h/runs/r1/dispatches/n/d1",
      CATHERD_RUN: "r1",
    });
    expect(isScrubbed("CATHERD_DISPATCH")).toBe(true);
  });

  it("sets PWD and the private temp, lets --env win over them and --pass-env bring a variable by name", () => {
    const inherited = { PWD: "/dispatcher", TMPDIR: "/tmp", SECRET_TOKEN: "s3", CLAUDECODE: "1", HOME: "/h" };
    const env = agentEnvironment(inherited, {
      overrides: { TEMP: "/mine", SECRET_TOKEN: "from-env" },
      markers: { dispatchId: "d1", run: null },
      place: { cwd: "/work/tree", tmp: "/home/x/d1/tmp" },
      passed: ["SECRET_TOKEN", "CLAUDECODE", "NOT_SET"],
    });
    expect(env).toEqual({
      PWD: "/work/tree",
      TMPDIR: "/home/x/d1/tmp",
      TMP: "/home/x/d1/tmp",
      TEMP: "/mine",
      HOME: "/h",
      SECRET_TOKEN: "s3",
      CLAUDECODE: "1",
      CATHERD_DISPATCH: "d1",
    });
    const noTemp = agentEnvironment(inherited, {
      overrides: {},
      markers: { dispatchId: "d1", run: null },
      place: { cwd: "/w", tmp: null },
    });
    expect([noTemp.PWD, noTemp.TMPDIR]).toEqual(["/w", "/tmp"]);
  });

  it.each([
    ["OPENAI_API_KEY", true],
    ["GITHUB_TOKEN", true],
    ["AWS_SECRET", true],
    ["DB_PASSWORD_FILE", true],
    ["PATH", false],
    ["KEYBOARD", false],
  ])("treats %s as secret: %s", (name, secret) => {
    expect(isSecretName(name)).toBe(secret);
  });
});

describe("errors", () => {
  it("maps codes to exit statuses and serialises for --json", () => {
    expect(
      ["E_INPUT_INVALID", "E_BACKEND_MISSING", "E_INTERRUPTED", "E_ADMIT_DUPLICATE"].map((c) =>
        exitCodeFor(c as never),
      ),
    ).toEqual([2, 3, 130, 1]);
    expect(new CatherdError("E_IO_LOCK", "held", { fix: "retry" }).toJSON()).toEqual({
      code: "E_IO_LOCK",
      message: "held",
      fix: "retry",
    });
    expect(new CatherdError("E_IO_LOCK", "held").toJSON().fix).toBeNull();
  });
});
