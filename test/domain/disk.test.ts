import { describe, expect, it } from "vitest";
import {
  DISK_FULL_CODES,
  diskEndingMessage,
  diskFullWords,
  diskStateWords,
  isDiskFullCode,
} from "../../src/domain/watch/disk.js";

describe("the words of a full disk", () => {
  it("names the file system for each refusal", () => {
    const place = "/mnt/x (tmpfs)";
    expect(diskFullWords({ code: "ENOSPC", place })).toBe("no space left on /mnt/x (tmpfs)");
    expect(diskFullWords({ code: "EDQUOT", place })).toBe("disk quota exceeded on /mnt/x (tmpfs)");
    expect(diskFullWords({ code: "EIO", place })).toBe("I/O error on /mnt/x (tmpfs)");
  });

  it("says the agent was stopped, or never started, for it", () => {
    const full = { code: "ENOSPC", place: "/h (ext4)" } as const;
    expect(diskEndingMessage(full, true)).toBe(
      "no space left on /h (ext4): the agent's output could no longer be kept, so catherd stopped it",
    );
    expect(diskEndingMessage(full, false)).toContain("so catherd did not start it");
  });

  it("tells a reader the disk is full, or failing", () => {
    expect(diskStateWords({ code: "EDQUOT", place: "/h" })).toBe(
      "the disk is full: disk quota exceeded on /h",
    );
    expect(diskStateWords({ code: "EIO", place: "/h" })).toBe("the disk is failing: I/O error on /h");
  });

  it("knows exactly the codes that say the disk cannot keep a file", () => {
    for (const code of DISK_FULL_CODES) expect(isDiskFullCode(code)).toBe(true);
    for (const code of ["EACCES", "EROFS", "ENOENT", undefined, 28]) expect(isDiskFullCode(code)).toBe(false);
  });
});
