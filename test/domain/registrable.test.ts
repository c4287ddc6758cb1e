import { describe, expect, it } from "vitest";
import { publicSuffixWildcard } from "../../src/domain/sandbox/registrable.js";

// A wildcard of the allow list must leave a registrable domain (specs/sandbox.md, "Network"): the public
// suffix list decides, its private part (hosting platforms where anyone takes a name) included.

describe("publicSuffixWildcard", () => {
  it.each([
    ["*.com", "com"],
    ["*.co.uk", "co.uk"],
    ["*.github.io", "github.io"],
    ["*.pages.dev", "pages.dev"],
    ["*.s3.amazonaws.com", "s3.amazonaws.com"],
    ["*.googleapis.com", "googleapis.com"],
    ["*.uk", "uk"],
    ["*.corp", "corp"],
  ])("finds %s wide open over %s", (wildcard, suffix) => {
    expect(publicSuffixWildcard(wildcard)).toBe(suffix);
  });

  it.each([
    "*.example.com",
    "*.example.co.uk",
    "*.octocat.github.io",
    "*.npmjs.org",
    "*.amazonaws.com",
    "*.example.corp",
  ])("lets %s through: it names one owner's domain", (wildcard) => {
    expect(publicSuffixWildcard(wildcard)).toBeNull();
  });
});
