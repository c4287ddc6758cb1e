import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { refuseCatherdWrites, refuseWideWildcards } from "../../src/dispatch/request/sandbox-input.js";
import { CatherdError } from "../../src/domain/errors.js";
import { isolatedHome, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/folders.js";

// What a sandbox request may not ask (specs/sandbox.md): an --allow-write into the catherd home, however the
// path is spelled, and an --allow-net wildcard over a public suffix. Refused before anything is written.

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

describe("--allow-net wildcards", () => {
  it.each(["*.com", "*.co.uk", "*.github.io"])(
    "refuses %s: it leaves no registrable domain",
    async (host) => {
      const error = await refuseWideWildcards([{ host, port: 443 }]).then(
        () => null,
        (e: unknown) => e as CatherdError,
      );
      expect(error?.code).toBe("E_INPUT_INVALID");
      expect(error?.message).toContain(`${host.slice(2)} is a public suffix`);
      expect(error?.fix).toContain(`--allow-net '*.example.${host.slice(2)}'`);
    },
  );

  it("accepts a wildcard under a registrable domain, and plain hosts", async () => {
    await expect(
      refuseWideWildcards([
        { host: "*.example.co.uk", port: 443 },
        { host: "com.example", port: 443 },
        { host: "127.0.0.1", port: 4873 },
      ]),
    ).resolves.toBeUndefined();
  });

  it("refuses `--allow-net '*.com'` on the command line, writing nothing", async () => {
    const { home, env } = isolatedHome();
    const result = await runCli(
      ["dispatch", "--backend", "exec", "--name", "wide", "--json", "--sandbox", "files+net"].concat([
        "--allow-net",
        "registry.npmjs.org,*.com",
        "--",
        "/bin/true",
      ]),
      { env },
    );
    expect(result.code).toBe(2);
    const error = (JSON.parse(result.stdout) as { error: { code: string; message: string } }).error;
    expect(error).toMatchObject({ code: "E_INPUT_INVALID" });
    expect(error.message).toContain("--allow-net *.com:443: com is a public suffix");
    expect(fs.existsSync(path.join(home, "runs"))).toBe(false);
  });
});
