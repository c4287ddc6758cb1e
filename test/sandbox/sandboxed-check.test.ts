import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { isolatedHome } from "../helpers/cli.js";
import { tempDir } from "../helpers/folders.js";
import { recordOf, useSandboxedDispatches } from "../helpers/sandbox.js";

// A sandboxed dispatch's check (specs/dispatch.md, "Checks and races") runs inside the agent's sandbox:
// what the agent may not read or write, its check may not either, and it cannot forge the verdict.

const sandboxed = useSandboxedDispatches();

describe("the check of a sandboxed dispatch", () => {
  it("runs inside the sandbox: it writes its workplace, never reads a planted key nor writes the record", async () => {
    const { env } = isolatedHome();
    const userHome = tempDir("catherd-user-home-");
    const secret = `planted-${randomBytes(12).toString("hex")}`;
    fs.mkdirSync(path.join(userHome, ".ssh"), { mode: 0o700 });
    fs.writeFileSync(path.join(userHome, ".ssh", "id_test"), `${secret}\n`);
    const work = tempDir("catherd-work-");
    const check = [
      `cat '${path.join(userHome, ".ssh", "id_test")}' || echo "key hidden"`,
      `echo '{"status":"ok"}' > "$CATHERD_DISPATCH_DIR/record.json" || echo "record read-only"`,
      "touch checked.txt && echo wrote the workplace",
      "exit 7",
    ].join("; ");
    const d = await sandboxed.dispatch(
      { ...env, HOME: userHome },
      "fenced",
      ["--cwd", work, "--sandbox", "files", "--verify", check],
      ["/bin/sh", "-c", "echo working"],
    );
    const record = await recordOf({ ...env, HOME: userHome }, "fenced");
    expect(record).toMatchObject({
      status: "failed",
      error: { kind: "verify" },
      verify: { passed: false, runs: [{ outcome: "failed", exitCode: 7 }] },
    });
    const log = fs.readFileSync(path.join(d.dir, "verify.log"), "utf8");
    expect(log).not.toContain(secret);
    expect(log).toContain("key hidden");
    expect(log).toContain("record read-only");
    expect(log).toContain("wrote the workplace");
    expect(fs.existsSync(path.join(work, "checked.txt"))).toBe(true);

    // The same check of a dispatch without a sandbox reads the key: the sandbox is what hid it.
    const open = await sandboxed.dispatch(
      { ...env, HOME: userHome },
      "open",
      ["--cwd", work, "--verify", check.replace(/; echo '\{"status".*?;/, ";")],
      ["/bin/sh", "-c", "echo working"],
    );
    await recordOf({ ...env, HOME: userHome }, "open");
    expect(fs.readFileSync(path.join(open.dir, "verify.log"), "utf8")).toContain(secret);
  });
});
