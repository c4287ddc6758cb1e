import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeDir } from "../../src/infra/atomic.js";
import { folderRefusal } from "../../src/infra/folder-refusal.js";
import { tempDir } from "../helpers/folders.js";

// A folder that cannot be made says why, of the part of its path that stopped it, not node's "ENOENT".

function refusalOf(make: () => void): { code?: string; message?: string; fix?: string } {
  try {
    make();
  } catch (error) {
    return error as { code?: string; message?: string; fix?: string };
  }
  throw new Error("it was made");
}

describe("makeDir's refusal", () => {
  it("says a home that is a symbolic link to nowhere points nowhere, and how to mend it", () => {
    const parent = tempDir();
    const home = path.join(parent, "home");
    fs.symlinkSync("gone", home);
    const error = folderRefusal(path.join(home, "runs/default"), new Error("ENOENT"), home) as {
      code: string;
      message: string;
      fix: string;
    };
    expect(error.code).toBe("E_IO_WRITE");
    expect(error.message).toBe(
      `cannot create ${home}/runs/default: catherd's home ${home} is a symbolic link to ${parent}/gone, which does not exist (ENOENT)`,
    );
    expect(error.fix).toBe(
      `create the folder it points to (mkdir -p ${parent}/gone), or point CATHERD_HOME at a folder this user can write`,
    );
  });

  it("says a file stands where a folder belongs, without CATHERD_HOME outside the home", () => {
    const parent = tempDir();
    fs.writeFileSync(path.join(parent, "file"), "");
    const dir = path.join(parent, "file/sub/dir");
    const error = refusalOf(() => makeDir(dir));
    expect(error).toMatchObject({
      code: "E_IO_WRITE",
      message: `cannot create ${dir}: ${parent}/file is a file, not a folder (ENOTDIR)`,
      fix: `move ${parent}/file aside`,
    });
  });

  it("hands back the error as it is when the path shows no cause (a full disk, a race)", () => {
    const dir = tempDir();
    const error = new Error("ENOSPC");
    expect(folderRefusal(path.join(dir, "a"), error, dir)).toBe(error);
  });
});
