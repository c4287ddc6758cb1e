import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { diskFullCodeOf, diskFullOf, fileSystemOf, freeBytes, fullDisk } from "../../src/infra/disk-space.js";
import { tempDir } from "../helpers/folders.js";

describe("the file system holding a folder", () => {
  it("names the mount point and type that hold a folder", () => {
    expect(fileSystemOf("/proc/self")).toBe("/proc (proc)");
    expect(fileSystemOf("/")).toMatch(/^\/ \(.+\)$/);
  });

  it("names the folder itself when it cannot be found", () => {
    expect(fileSystemOf("/no/such/folder")).toBe("/no/such/folder");
  });

  it("counts the free bytes of a folder with room, and does not call it full", () => {
    const dir = tempDir();
    expect(freeBytes(dir)).toBeGreaterThan(0);
    expect(fullDisk(dir)).toBeNull();
    expect(freeBytes("/no/such/folder")).toBeNull();
  });

  it("takes ENOSPC, EDQUOT and EIO for a full disk, and nothing else", () => {
    const dir = tempDir();
    const refused = (code: string) => Object.assign(new Error(code), { code });
    expect(diskFullCodeOf(refused("EDQUOT"))).toBe("EDQUOT");
    expect(diskFullOf(refused("ENOSPC"), dir)).toEqual({ code: "ENOSPC", place: fileSystemOf(dir) });
    expect(diskFullOf(refused("EACCES"), dir)).toBeNull();
    expect(diskFullOf(new Error("plain"), dir)).toBeNull();
    expect(diskFullOf(null, dir)).toBeNull();
    expect(fs.existsSync(dir)).toBe(true);
  });
});
