import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { refuseCatherdWrites } from "../../src/dispatch/request/sandbox-input.js";
import { CatherdError } from "../../src/domain/errors.js";
import { tempDir } from "../helpers/folders.js";

// What a fence request may not ask (specs/sandbox.md): an --allow-write into the catherd home, however the
// path is spelled. Refused before anything is written.

/** A home with a run's dispatch folder, a symlink to the home and one to its parent. */
function places() {
  const outer = tempDir("catherd-outer-");
  const home = path.join(outer, "home");
  const run = path.join(home, "runs", "default");
  const dir = path.join(run, "dispatches", "n", "D1");
  fs.mkdirSync(dir, { recursive: true });
  const links = tempDir("catherd-links-");
  fs.symlinkSync(home, path.join(links, "home"));
  fs.symlinkSync(outer, path.join(links, "outer"));
  return { outer, home, run, dir, links };
}

function refusal(run: () => unknown): CatherdError | null {
  try {
    run();
    return null;
  } catch (error) {
    if (error instanceof CatherdError) return error;
    throw error;
  }
}

describe("--allow-write into the catherd home", () => {
  const s = places();
  it.each([
    ["the home", s.home],
    ["the home with a trailing slash", `${s.home}/`],
    ["the home's runs", path.join(s.home, "runs")],
    ["the run", s.run],
    ["the run's dispatches", path.join(s.run, "dispatches")],
    ["a dispatch folder", s.dir],
    ["the home's locks", path.join(s.home, "locks")],
    ["the run through a symlink to the home", path.join(s.links, "home", "runs", "default")],
    ["the run through a symlink, with a trailing slash", `${path.join(s.links, "home", "runs", "default")}/`],
    ["the run through `..`", `${s.dir}/../../..`],
    ["the home through the parent's symlink and `..`", `${path.join(s.links, "outer", "home", "runs")}/..`],
  ])("refuses %s", (_what, asked) => {
    const error = refusal(() => refuseCatherdWrites([asked], s.home));
    expect(error?.code).toBe("E_INPUT_INVALID");
    expect(error?.message).toContain(`is in the catherd home ${s.home}`);
    expect(error?.fix).toContain(`give a folder outside ${s.home}`);
  });

  it.each([
    ["a parent of the home (mounted back read-only over it)", s.outer],
    ["a parent through a symlink", path.join(s.links, "outer")],
    ["a folder beside the home", s.links],
  ])("accepts %s", (_what, asked) => {
    expect(refusal(() => refuseCatherdWrites([asked], s.home))).toBeNull();
  });

  it("judges a home that does not exist yet by the real path of its parent", () => {
    const home = path.join(s.links, "outer", "new-home");
    expect(refusal(() => refuseCatherdWrites([path.join(s.outer, "new-home")], home))?.code).toBe(
      "E_INPUT_INVALID",
    );
  });
});
