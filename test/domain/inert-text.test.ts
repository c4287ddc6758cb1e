import { describe, expect, it } from "vitest";
import { oneLine } from "../../src/backends/line-parsing.js";
import { cell } from "../../src/cli/render.js";
import { cutChars, inertText, SHOWN_CONTROL } from "../../src/domain/text/inert-text.js";
import { cleanMessage, recordTail } from "../../src/domain/text/redact.js";

// An agent's bytes on catherd's screen move nothing: every escape sequence goes whole, every other
// control shows as U+FFFD, and a cut comes after, so none is ever kept in part.

const ESC = "\u001b";
const BEL = "\u0007";
const ST = `${ESC}\\`;
const F = SHOWN_CONTROL;

/** Any character a terminal acts on but tab, newline and CRLF: C0, DEL, C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const ACTIVE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n)/;

describe("inertText", () => {
  it.each([
    ["plain text, as it is", "npm test: 3 passed", "npm test: 3 passed"],
    ["a title set, ended by BEL", `${ESC}]0;pwned${BEL}hello`, "hello"],
    ["a title set, ended by ST", `${ESC}]2;pwned${ST}hello`, "hello"],
    ["a hyperlink (OSC 8)", `${ESC}]8;;https://x.example${ST}link${ESC}]8;;${ST}`, "link"],
    ["clearing the screen, colours, a cursor move", `${ESC}[2J${ESC}[31mred${ESC}[0m${ESC}[10;5H!`, "red!"],
    ["a private-mode CSI (the alternate screen)", `${ESC}[?1049hx`, "x"],
    ["a DCS string", `${ESC}Pq#0;2;0;0;0${ST}after`, "after"],
    ["an APC and a PM string", `${ESC}_apc${ST}${ESC}^pm${ST}z`, "z"],
    ["a reset, a cursor save, a character set", `${ESC}c${ESC}7${ESC}(Bk`, "k"],
    ["an 8-bit CSI and OSC", `\u009b2J\u009d0;t\u0007ok`, "ok"],
    ["an OSC without its end: its introducer goes, its words stay", `${ESC}]0;no end`, "0;no end"],
    ["a CSI cut short at the end", `abc${ESC}[12`, "abc12"],
    ["BEL, backspace, a lone ESC", `a${BEL}c\bd${ESC}`, `a${F}c${F}d${F}`],
    ["a carriage return inside a line", "rm -rf /\rharmless", `rm -rf /${F}harmless`],
    ["CRLF, tab and newline, as they are", "a\tb\r\nc\n", "a\tb\r\nc\n"],
    ["a C1 control and DEL", "x\u0085y\u007fz", `x${F}y${F}z`],
    ["a NUL", "a\u0000b", `a${F}b`],
  ])("%s", (_title, text, want) => {
    const inert = inertText(text);
    expect(inert).toBe(want);
    expect(inert).not.toMatch(ACTIVE);
  });

  it("leaves nothing active in any cut of a sequence-laden line", () => {
    const line = `${ESC}]0;title${BEL}${ESC}[2J${"x".repeat(7)}${ESC}]0;t${ST}\u009b31m${ESC}Pd${ST}end`;
    for (let end = 0; end <= line.length; end += 1) {
      expect(inertText(line.slice(0, end))).not.toMatch(ACTIVE);
    }
  });
});

describe("every cut of agent text comes after it is made inert", () => {
  /** A line whose title sequence starts `at` characters in: a cut at 60 falls before, in or after it. */
  const laden = (at: number) =>
    `${"a".repeat(at)}${ESC}]0;a long window title${BEL}${ESC}[2J${"b".repeat(40)}`;

  it.each([
    ["a status cell", (text: string) => cell(text, 60)],
    ["a one-line excerpt (what the supervisor records as doing)", (text: string) => oneLine(text)],
    ["a record's message", (text: string) => cleanMessage(text, 60)],
    ["a record's tail", (text: string) => recordTail([text]).join("\n")],
  ])("%s", (_title, cut) => {
    for (let at = 20; at < 70; at += 1) {
      const shown = cut(laden(at));
      expect(shown).not.toMatch(ACTIVE);
      expect(shown).not.toContain("window title");
    }
    expect(cut(`${ESC}]0;${"t".repeat(80)}`)).not.toMatch(ACTIVE);
  });

  it("never splits a character in two", () => {
    expect(cutChars("ab😀", 3)).toBe("ab");
    expect(cutChars("ab😀", 4)).toBe("ab😀");
    expect(cell("ab😀cd", 4)).toBe("ab…");
  });
});
