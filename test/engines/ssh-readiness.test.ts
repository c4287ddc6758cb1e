import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CliAsked } from "../../src/engines/engine.js";
import { MAX_ANSWER_CHARS, readAnswer } from "../../src/engines/ssh/readiness-answer.js";
import { ANSWER_MARK, readinessScript } from "../../src/engines/ssh/readiness-script.js";
import { tempDir } from "../helpers/folders.js";

// The readiness script's answer as the SSH engine reads it (specs/placement.md, "Readiness on the host"):
// what a host prints is untrusted, so only whole, well-formed answers are read, and anything else is
// `garbled` with the reason. The script itself is run through a real `sh -s`, as a host runs it.

const M = ANSWER_MARK;
const WHOLE = [
  `${M} host box-1`,
  `${M} shared ok`,
  `${M} node here v22.3.0 /usr/bin/node`,
  `${M} catherd PATH /opt/catherd/dist/bin/supervisor.js`,
  `${M} cli 0 at PATH /usr/local/bin/codex`,
  `${M} cli 0 said codex-cli 0.171.0`,
  `${M} cli 0 code 0`,
  `${M} cli 0 login file /home/me/.codex/auth.json`,
  `${M} cli 1 missing`,
  `${M} cli 1 login variable ANTHROPIC_API_KEY`,
  `${M} end`,
];
const IDS = ["codex", "claude-code"];

const without = (prefix: string) => WHOLE.filter((l) => !l.startsWith(`${M} ${prefix}`)).join("\n");

describe("reading a host's readiness answer", () => {
  it("reads a whole answer, the host's banners around it ignored", () => {
    const stdout = ["Welcome to box-1!", ...WHOLE, "Last login: never"].join("\n");
    expect(readAnswer(stdout, IDS)).toEqual({
      kind: "read",
      answer: {
        name: "box-1",
        shared: true,
        node: { via: "here", version: "v22.3.0", path: "/usr/bin/node" },
        catherd: { via: "PATH", path: "/opt/catherd/dist/bin/supervisor.js" },
        clis: [
          {
            id: "codex",
            path: "/usr/local/bin/codex",
            via: "PATH",
            version: { words: "codex-cli 0.171.0", code: 0 },
            login: { kind: "file", where: "/home/me/.codex/auth.json" },
          },
          {
            id: "claude-code",
            path: null,
            via: null,
            version: null,
            login: { kind: "variable", where: "ANTHROPIC_API_KEY" },
          },
        ],
      },
    });
  });

  it("reads timeout's 124 as a version that did not end in time", () => {
    const stdout = WHOLE.join("\n").replace(`${M} cli 0 code 0`, `${M} cli 0 code 124`);
    const read = readAnswer(stdout, IDS);
    expect(read.kind === "read" && read.answer.clis[0]?.version).toEqual({
      words: "codex-cli 0.171.0",
      code: null,
    });
  });

  it.each<[string, string, RegExp]>([
    ["nothing at all", "", /cut short/],
    ["garbage", "\u0000\u0001 not ours\n%%%", /cut short/],
    ["no end line", without("end"), /cut short/],
    ["no host line", without("host"), /no "host" line/],
    ["no shared line", without("shared"), /no "shared" line/],
    ["no node line", without("node"), /no "node" line/],
    ["no line on a CLI", without("cli 1 missing"), /no line on CLI 1/],
    ["a line twice", `${M} shared ok\n${WHOLE.join("\n")}`, /"shared" twice/],
    ["a shared line that says neither", WHOLE.join("\n").replace("shared ok", "shared maybe"), /./],
    ["a relative path", WHOLE.join("\n").replace("/usr/bin/node", "bin/node"), /./],
    ["a version with spaces", WHOLE.join("\n").replace("v22.3.0", "v22 3 0"), /./],
    ["an exit code past 255", WHOLE.join("\n").replace("code 0", "code 999"), /./],
    [
      "a login that says what it may not",
      WHOLE.join("\n").replace("login variable", "login secret"),
      /a login line/,
    ],
    [
      "a variable's value where its name goes",
      WHOLE.join("\n").replace("ANTHROPIC_API_KEY", "sk-ant=1"),
      /./,
    ],
    ["words of a CLI not asked", `${M} cli 7 said hi\n${WHOLE.join("\n")}`, /CLI 7, which was not asked/],
    [
      "a line of our own, huge",
      `${M} host ${"x".repeat(10_000)}\n${WHOLE.join("\n")}`,
      /a line of 10019 characters/,
    ],
    [
      "a CLI that says too much",
      [...WHOLE.slice(0, 5), ...Array(7).fill(`${M} cli 0 said more`), ...WHOLE.slice(5)].join("\n"),
      /more than 6 lines/,
    ],
  ])("refuses %s as garbled", (_title, stdout, why) => {
    const read = readAnswer(stdout, IDS);
    expect(read.kind).toBe("garbled");
    expect(read.kind === "garbled" && read.why).toMatch(why);
  });

  it("reads no further than its bound: a whole answer after megabytes of output is cut short", () => {
    const stdout = `${"y".repeat(MAX_ANSWER_CHARS)}\n${WHOLE.join("\n")}`;
    expect(readAnswer(stdout, IDS)).toEqual({
      kind: "garbled",
      why: "no end line: the answer was cut short",
    });
  });
});

describe("the readiness script, run by a real sh", () => {
  /** Runs the script with `env` and reads its answer. */
  function run(clis: CliAsked[], env: NodeJS.ProcessEnv, marker = { token: "t0k3n", write: true }) {
    const dir = tempDir();
    const markerPath = path.join(dir, ".placement-check.x");
    if (marker.write) fs.writeFileSync(markerPath, `${marker.token}\n`);
    const script = readinessScript({
      marker: { path: markerPath, token: "t0k3n" },
      supervisor: { node: process.execPath, program: path.join(dir, "supervisor.js") },
      clis,
    });
    fs.writeFileSync(path.join(dir, "supervisor.js"), "");
    const stdout = execFileSync("sh", ["-s"], {
      input: script,
      env: { SHELL: "/bin/false", ...env },
      encoding: "utf8",
    });
    return readAnswer(
      stdout,
      clis.map((c) => c.id),
    );
  }

  const login = {
    files: [{ variable: "FAKE_HOME", path: "auth.json", underHome: ".fake/auth.json" }],
    variables: ["FAKE_KEY"],
  };

  it("finds node and the program at this host's paths, a CLI on PATH with its version, and its login file", () => {
    const bin = tempDir();
    const home = tempDir();
    fs.writeFileSync(path.join(bin, "fake"), "#!/bin/sh\necho 'fake 1.2.3'\nexit 0\n", { mode: 0o755 });
    fs.mkdirSync(path.join(home, ".fake"));
    fs.writeFileSync(path.join(home, ".fake/auth.json"), "{}");
    const cli: CliAsked = { id: "fake", here: null, name: "fake", versionArgs: ["--version"], login };
    const read = run([cli], { PATH: `${bin}:/usr/bin:/bin`, HOME: home });
    expect(read).toMatchObject({
      kind: "read",
      answer: {
        shared: true,
        node: { via: "here", path: process.execPath, version: process.version },
        catherd: { via: "here" },
        clis: [
          {
            path: path.join(bin, "fake"),
            via: "PATH",
            version: { words: "fake 1.2.3", code: 0 },
            login: { kind: "file", where: path.join(home, ".fake/auth.json") },
          },
        ],
      },
    });
  });

  it("says a CLI is missing, its failed version's exit code, a key variable by name only, an unread marker", () => {
    const bin = tempDir();
    fs.writeFileSync(path.join(bin, "broken"), "#!/bin/sh\necho 'no such module'\nexit 7\n", { mode: 0o755 });
    const clis: CliAsked[] = [
      { id: "gone", here: "/nowhere/gone", name: "gone", versionArgs: ["--version"], login },
      {
        id: "broken",
        here: path.join(bin, "broken"),
        name: "broken",
        versionArgs: ["--version"],
        login: null,
      },
    ];
    const read = run(
      clis,
      { PATH: "/usr/bin:/bin", HOME: tempDir(), FAKE_KEY: "sk-secret" },
      { token: "other", write: true },
    );
    expect(read).toMatchObject({
      kind: "read",
      answer: {
        shared: false,
        clis: [
          { path: null, version: null, login: { kind: "variable", where: "FAKE_KEY" } },
          { via: "here", version: { words: "no such module", code: 7 }, login: null },
        ],
      },
    });
    expect(JSON.stringify(read)).not.toContain("sk-secret");
  });
});
