import { type ChildProcess, spawn } from "node:child_process";
import * as path from "node:path";
import { ROOT, tempDir } from "./folders.js";
import { waitForFile } from "./wait.js";

/**
 * Starts a process that takes `<runDir>/admission.lock` as a dispatcher does (proper-lockfile, stale after
 * `staleMs`, refreshed while held; it waits while a live holder has it and takes over a stale one) and
 * keeps it until killed. Resolves once it holds the lock. The caller kills it (by its pid).
 */
export async function holdAdmissionLock(runDir: string, staleMs: number): Promise<ChildProcess> {
  const ready = path.join(tempDir(), "locked");
  const lock = path.join(runDir, "admission.lock");
  const holder = spawn(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import lockfile from "proper-lockfile"; import fs from "node:fs";
       await lockfile.lock(${JSON.stringify(runDir)}, { lockfilePath: ${JSON.stringify(lock)}, realpath: false,
         stale: ${staleMs}, retries: { retries: 1000, minTimeout: 50, maxTimeout: 100 } });
       fs.writeFileSync(${JSON.stringify(ready)}, "1"); setInterval(() => {}, 1000);`,
    ],
    { cwd: ROOT, stdio: "ignore" },
  );
  await waitForFile(ready, 60_000);
  return holder;
}
