import * as fs from "node:fs";
import * as path from "node:path";

// Reading and writing the kernel's cgroup interface files: small texts, one value or `key value` lines.

/** A cgroup file's text, or null when it does not exist or cannot be read. */
export function readCgroupFile(dir: string, name: string): string | null {
  try {
    return fs.readFileSync(path.join(dir, name), "utf8");
  } catch {
    return null;
  }
}

/** Writes one value into a cgroup file (each write is one request to the kernel); throws what it says. */
export function writeCgroupFile(dir: string, name: string, value: string): void {
  fs.writeFileSync(path.join(dir, name), value);
}

/** Whether a cgroup interface file exists: how catherd learns what the kernel offers. */
export function hasCgroupFile(dir: string, name: string): boolean {
  return fs.existsSync(path.join(dir, name));
}

/** The number under `key` in a flat-keyed file (`populated 1`, `oom_kill 0`, `usage_usec 1234`), or null. */
export function keyedNumber(text: string | null, key: string): number | null {
  if (text === null) return null;
  for (const line of text.split("\n")) {
    const [name, value] = line.trim().split(/\s+/);
    if (name === key && value !== undefined && /^\d+$/.test(value)) return Number(value);
  }
  return null;
}

/** A file holding one integer (`memory.max_usage_in_bytes`, `cpuacct.usage`), or null ("max", missing). */
export function singleNumber(text: string | null): number | null {
  const value = text?.trim();
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : null;
}

/** The pids listed in a cgroup.procs file (empty when it cannot be read). */
export function pidsIn(dir: string): number[] {
  const text = readCgroupFile(dir, "cgroup.procs");
  if (text === null) return [];
  return text
    .split("\n")
    .filter((line) => /^\d+$/.test(line))
    .map(Number);
}
