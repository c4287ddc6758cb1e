import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { exportLine, shellQuote } from "../../src/engines/ssh/quote.js";

// The SSH engine's one quoting (specs/placement.md, "The start"): every value a remote shell reads is one
// word, whatever it holds. Proven through a real sh, which is what reads it on the host.

const HOSTILE = [
  "",
  "plain",
  "two words",
  "it's",
  "''",
  "'; rm -rf / #",
  "$(touch /tmp/catherd-pwned)",
  "`touch /tmp/catherd-pwned`",
  ["$", "{HOME}"].join(""), // a parameter expansion in braces
  "$HOME",
  'a"b',
  "back\\slash",
  "line\nbreak",
  "tab\there",
  "glob * ?",
  "semi;colon&amp|pipe>out<in",
  "-n",
  "é ✓ 猫",
  "\u0001\u007f",
];

describe("quoting a value for the remote shell", () => {
  it.each(HOSTILE)("gives %j to sh as one word, unchanged", (value) => {
    const out = execFileSync("sh", ["-c", `printf '%s\\0' ${shellQuote(value)}`], { encoding: "utf8" });
    expect(out).toBe(`${value}\0`);
  });

  it.each(HOSTILE)("sets a variable to %j, unchanged, and exports it", (value) => {
    const script = `${exportLine("CATHERD_PROBE", value)}\nsh -c 'printf "%s" "$CATHERD_PROBE"'`;
    expect(execFileSync("sh", ["-c", script], { encoding: "utf8", env: {} })).toBe(value);
  });

  it.each<[string, string]>([
    ["", "''"],
    ["a b", "'a b'"],
    ["it's", "'it'\\''s'"],
  ])("writes %j as %s", (value, quoted) => {
    expect(shellQuote(value)).toBe(quoted);
  });

  it("refuses a NUL, which no shell word can carry, and a name that is no variable's", () => {
    expect(() => shellQuote("a\0b")).toThrow(expect.objectContaining({ code: "E_INPUT_INVALID" }));
    expect(() => exportLine("A;B", "x")).toThrow(expect.objectContaining({ code: "E_INPUT_INVALID" }));
    expect(() => exportLine("1A", "x")).toThrow(expect.objectContaining({ code: "E_INPUT_INVALID" }));
  });
});
