import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_MESSAGE_BYTES } from "../../src/domain/steering/inbox.js";
import { type CliResult, collectOutput, dispatchFolders, isolatedHome } from "../helpers/cli.js";
import { CLI_MAIN, tempDir } from "../helpers/folders.js";

// How `dispatch` and `send` read a text given as a folder, a file or a stream (specs/dispatch.md §1,
// specs/steering.md "Sending"): a refusal names what the user gave and the limit of what it was for. Run
// through a shell, because only a shell's `<` and `|` give the CLI a folder or an endless pipe as stdin.

const catherd = `'${process.execPath}' '${CLI_MAIN}'`;

/** `sh -c script` with a deadline; its stdin is /dev/null unless the script redirects it. */
function runShell(script: string, env: NodeJS.ProcessEnv): Promise<CliResult> {
  const child = spawn("/bin/sh", ["-c", script], { env, cwd: tempDir(), stdio: ["ignore", "pipe", "pipe"] });
  return collectOutput(child, `sh -c ${script}`, 20_000);
}

const folder = tempDir("some-folder-");
const tenMegabytes = path.join(tempDir(), "ten-mb.md");
fs.writeFileSync(tenMegabytes, Buffer.alloc(10_000_000, "a"));
const overMessage = path.join(tempDir(), "over-a-message.md");
fs.writeFileSync(overMessage, Buffer.alloc(MAX_MESSAGE_BYTES + 1, "a"));

const MESSAGE_LIMIT = "65536-byte (64 KiB) limit of a message";

const cases: { title: string; script: string; mentions: string[]; absent: string[] }[] = [
  {
    title: "a folder as the stdin of a dispatch that needs a brief",
    script: `exec ${catherd} dispatch --backend codex --bin /bin/true < '${folder}'`,
    mentions: ["stdin is a folder", "--brief-file"],
    absent: ["is empty"],
  },
  {
    title: "a folder as the stdin of an exec dispatch",
    script: `exec ${catherd} dispatch --backend exec -- true < '${folder}'`,
    mentions: ["stdin is a folder", "--brief-file"],
    absent: [],
  },
  {
    title: "a folder as the stdin of send",
    script: `exec ${catherd} send somebody < '${folder}'`,
    mentions: ["stdin is a folder", "message", "--file"],
    absent: ["brief"],
  },
  {
    title: "send --file of 10 MB",
    script: `exec ${catherd} send somebody --file '${tenMegabytes}'`,
    mentions: [`--file ${tenMegabytes} is 10000000 bytes`, MESSAGE_LIMIT],
    absent: ["brief", "4 MiB"],
  },
  {
    title: "send of a file one byte over a message on stdin",
    script: `exec ${catherd} send somebody < '${overMessage}'`,
    mentions: [`the message on stdin is ${MAX_MESSAGE_BYTES + 1} bytes`, MESSAGE_LIMIT],
    absent: ["brief", "4 MiB"],
  },
  {
    title: "send of a finite pipe over a message",
    script: `head -c 100000 '${tenMegabytes}' | exec ${catherd} send somebody`,
    mentions: ["the message on stdin is over", MESSAGE_LIMIT],
    absent: ["brief", "4 MiB", "no dispatch"],
  },
  {
    title: "send of an endless stdin",
    script: `yes | exec ${catherd} send somebody`,
    mentions: ["the message on stdin is over", MESSAGE_LIMIT],
    absent: ["brief", "4 MiB"],
  },
  {
    title: "send --file - of an endless device",
    script: `exec ${catherd} send somebody --file - < /dev/zero`,
    mentions: ["the message on stdin is over", MESSAGE_LIMIT],
    absent: ["brief", "4 MiB"],
  },
];

describe("a text from a folder, a file or a stream is refused in the words of what it was for", () => {
  it.each(cases)("refuses $title, exit 2, naming it", async (c) => {
    const { home, env } = isolatedHome();
    const result = await runShell(c.script, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error E_INPUT_INVALID: .*\nfix: .+\n$/s);
    for (const word of c.mentions) expect(result.stderr).toContain(word);
    for (const word of c.absent) expect(result.stderr).not.toContain(word);
    expect(dispatchFolders(home)).toEqual([]);
  });
});
