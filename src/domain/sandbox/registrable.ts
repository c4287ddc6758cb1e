import { parse } from "tldts";

// Whether an allow list's wildcard leaves a registrable domain (specs/sandbox.md, "Network"): judged by the
// public suffix list — its ICANN part (`com`, `co.uk`) and its private part (`github.io`, `pages.dev`,
// `s3.amazonaws.com`), where anyone may take a name — as tldts carries it. A rule of label counts cannot
// tell `*.co.uk` (everyone's) from `*.example.com` (one owner's); the list can. Kept apart from
// sandbox.ts: the list is ~130 KB to load, only for a request that gives a wildcard.

/**
 * The public suffix `*.rest` would open wholly — `rest` itself when it is a public suffix, or one a
 * suffix's own wildcard rule makes of it — or null when `rest` is a registrable domain or below one.
 * A name under an unknown top-level domain (`*.corp`) counts its last label as the suffix.
 */
export function publicSuffixWildcard(wildcard: string): string | null {
  const rest = wildcard.replace(/^\*\./, "");
  const parsed = parse(rest, { allowPrivateDomains: true });
  if (parsed.isIp === true) return null;
  return parsed.domain === null ? (parsed.publicSuffix ?? rest) : null;
}
