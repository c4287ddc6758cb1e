import { describe, expect, it } from "vitest";
import { CatherdError } from "../../src/domain/errors.js";
import { formatSize, parseSize } from "../../src/domain/text/size.js";

describe("parseSize", () => {
  it.each([
    ["64M", 64 * 1024 ** 2],
    ["64m", 64 * 1024 ** 2],
    ["64MiB", 64 * 1024 ** 2],
    ["64MB", 64 * 1024 ** 2],
    ["1.5G", 1.5 * 1024 ** 3],
    ["8192K", 8 * 1024 ** 2],
    ["1T", 1024 ** 4],
    ["67108864", 67108864],
  ])("reads %s as %d bytes", (text, bytes) => {
    expect(parseSize("--memory", text)).toBe(bytes);
  });

  it.each(["", "M", "64X", "-64M", "64 M M", "1K", "4194303", "9".repeat(40)])("refuses %j", (text) => {
    expect(() => parseSize("--memory", text)).toThrow(CatherdError);
  });

  it("names the field and says how to write a size", () => {
    expect(() => parseSize("--memory", "lots")).toThrow(/--memory "lots" is not a size/);
    try {
      parseSize("--memory", "1K");
    } catch (error) {
      expect(error).toMatchObject({
        code: "E_INPUT_INVALID",
        fix: "give --memory as a size such as 512M or 4G",
      });
    }
  });
});

describe("formatSize", () => {
  it.each([
    [64 * 1024 ** 2, "64M"],
    [1.5 * 1024 ** 3, "1.5G"],
    [900 * 1024, "900K"],
    [512, "512B"],
  ])("writes %d as %s", (bytes, text) => {
    expect(formatSize(bytes)).toBe(text);
  });
});
