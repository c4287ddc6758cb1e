import { CatherdError } from "../errors.js";

const UNIT_BYTES = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 } as const;
const SIZE = /^(\d+(?:\.\d+)?)([kmgt]?)(?:i?b)?$/i;

/** The smallest memory limit catherd accepts: below it no agent CLI even starts. */
export const MIN_MEMORY_BYTES = 4 * 1024 ** 2;

/**
 * Parses a memory size: bytes, or a number with K, M, G or T (powers of 1024, as the kernel's cgroup files
 * and `docker --memory` read them; `KiB`, `MB`, `g` are the same). Throws E_INPUT_INVALID naming the field.
 */
export function parseSize(field: string, text: string): number {
  const invalid = (why: string) =>
    new CatherdError("E_INPUT_INVALID", `${field} ${JSON.stringify(text)} ${why}`, {
      fix: `give ${field} as a size such as 512M or 4G`,
    });
  const m = text.length <= 32 ? SIZE.exec(text.trim()) : null;
  if (m === null) throw invalid("is not a size");
  const unit = (m[2] ?? "").toLowerCase() as keyof typeof UNIT_BYTES;
  const bytes = Math.floor(Number(m[1]) * UNIT_BYTES[unit]);
  if (bytes < MIN_MEMORY_BYTES) throw invalid("is below 4M");
  if (!Number.isSafeInteger(bytes)) throw invalid("is too large");
  return bytes;
}

/** A short human size: `64M`, `1.5G`, `900K`. */
export function formatSize(bytes: number): string {
  for (const [unit, size] of [
    ["T", 1024 ** 4],
    ["G", 1024 ** 3],
    ["M", 1024 ** 2],
    ["K", 1024],
  ] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))}${unit}`;
  }
  return `${bytes}B`;
}
