import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  hasReserve,
  makeReserve,
  markDiskFull,
  RESERVE_BYTES,
  releaseReserve,
  reserveWriter,
  withRoom,
} from "../../supervisor/disk-reserve.js";
import { tempDir } from "../helpers/folders.js";

const reserveOf = (dir: string) => path.join(dir, "disk-reserve");
const noSpace = () => Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });

describe("the supervisor's disk reserve", () => {
  it("holds RESERVE_BYTES, 0600, until given back", () => {
    const dir = tempDir();
    makeReserve(dir);
    const stat = fs.statSync(reserveOf(dir));
    expect(stat.size).toBe(RESERVE_BYTES);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(hasReserve(dir)).toBe(true);
    releaseReserve(dir);
    expect(hasReserve(dir)).toBe(false);
    releaseReserve(dir);
  });

  it("writes a JSON file into the reserve's blocks, named as the file, the reserve gone", () => {
    const dir = tempDir();
    makeReserve(dir);
    const inode = fs.statSync(reserveOf(dir)).ino;
    const file = path.join(dir, "exit.json");
    reserveWriter(dir).writeJson(file, { schema: 1, reason: "supervisor-error" });
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ schema: 1, reason: "supervisor-error" });
    expect(fs.statSync(file).ino).toBe(inode);
    expect(hasReserve(dir)).toBe(false);
  });

  it("creates a file exclusively through the reserve: false when it exists", () => {
    const dir = tempDir();
    const file = path.join(dir, "exit.json");
    fs.writeFileSync(file, "{}\n");
    makeReserve(dir);
    expect(reserveWriter(dir).createJson(file, { schema: 1 })).toBe(false);
    expect(fs.readFileSync(file, "utf8")).toBe("{}\n");
    makeReserve(dir);
    fs.rmSync(file);
    expect(reserveWriter(dir).createJson(file, { schema: 1 })).toBe(true);
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ schema: 1 });
  });

  it("throws when the folder has no reserve", () => {
    const dir = tempDir();
    expect(() => reserveWriter(dir).writeJson(path.join(dir, "exit.json"), {})).toThrow(/ENOENT/);
  });

  it("gives the reserve back and tries once more when a write is refused for want of room", async () => {
    const dir = tempDir();
    makeReserve(dir);
    const lines: string[] = [];
    let tries = 0;
    const written = await withRoom(
      dir,
      (event) => lines.push(event),
      "record.json",
      async () => {
        tries += 1;
        if (hasReserve(dir)) throw noSpace();
        return "done";
      },
    );
    expect(written).toBe("done");
    expect(tries).toBe(2);
    expect(lines).toEqual(["reserve-released"]);
  });

  it("does not retry other refusals, nor without a reserve", async () => {
    const dir = tempDir();
    makeReserve(dir);
    const denied = Object.assign(new Error("EACCES"), { code: "EACCES" });
    await expect(
      withRoom(
        dir,
        () => {},
        "x",
        () => Promise.reject(denied),
      ),
    ).rejects.toBe(denied);
    expect(hasReserve(dir)).toBe(true);
    releaseReserve(dir);
    const full = noSpace();
    await expect(
      withRoom(
        dir,
        () => {},
        "x",
        () => Promise.reject(full),
      ),
    ).rejects.toBe(full);
  });

  it("leaves an empty disk-full marker", () => {
    const dir = tempDir();
    markDiskFull(dir);
    expect(fs.statSync(path.join(dir, "disk-full")).size).toBe(0);
    markDiskFull(path.join(dir, "gone"));
  });
});
