import { describe, expect, it } from "vitest";
import {
  allowsConnection,
  deniedUnderHome,
  isWorktreePlace,
  loopbackPorts,
  parseNetRule,
  refusedWriteIn,
  sandboxMayWrite,
  sandboxWords,
  writableUnderHome,
} from "../../src/domain/sandbox/sandbox.js";

// The sandbox's rules without I/O (specs/sandbox.md): the allow list, what is hidden and writable, and how a
// refusal reads.

describe("parseNetRule", () => {
  it.each([
    ["registry.npmjs.org", { host: "registry.npmjs.org", port: 443 }],
    ["Registry.NPMJS.org:8443", { host: "registry.npmjs.org", port: 8443 }],
    ["*.example.com", { host: "*.example.com", port: 443 }],
    ["127.0.0.1:4873", { host: "127.0.0.1", port: 4873 }],
    ["localhost:3000", { host: "localhost", port: 3000 }],
    ["[::1]:8080", { host: "::1", port: 8080 }],
    ["10.0.0.7:80", { host: "10.0.0.7", port: 80 }],
  ])("reads %s", (text, rule) => {
    expect(parseNetRule(text)).toEqual(rule);
  });

  it.each([
    ["127.0.0.1", "a loopback host needs its port"],
    ["example.com:http", "is not a number"],
    ["example.com:0", "is not from 1 to 65535"],
    ["example.com:70000", "is not from 1 to 65535"],
    ["-rf.example.com", "is not a host name"],
    ["exa mple.com", "is not a host name"],
    ["[2001:db8::1]:443", "the only IPv6 address allowed is [::1]"],
    ["http://example.com", "is not"],
  ])("refuses %s", (text, why) => {
    expect(parseNetRule(text)).toEqual(expect.stringContaining(why));
  });
});

describe("allowsConnection", () => {
  const rules = [
    { host: "api.anthropic.com", port: 443 },
    { host: "*.example.com", port: 443 },
    { host: "127.0.0.1", port: 4873 },
  ];
  it.each([
    ["api.anthropic.com", 443, true],
    ["API.Anthropic.com", 443, true],
    ["api.anthropic.com", 80, false],
    ["evil-api.anthropic.com", 443, false],
    ["registry.example.com", 443, true],
    ["example.com", 443, false],
    ["notexample.com", 443, false],
    ["127.0.0.1", 4873, true],
    ["localhost", 4873, true],
    ["[::1]", 4873, true],
    ["127.0.0.1", 4874, false],
    ["10.0.0.1", 4873, false],
  ] as const)("%s:%i → %s", (host, port, allowed) => {
    expect(allowsConnection(rules, host, port)).toBe(allowed);
  });

  it("bridges each loopback port once, sorted; one below 1024 is reached through the proxy only", () => {
    expect(
      loopbackPorts([
        { host: "localhost", port: 9000 },
        { host: "127.0.0.1", port: 3000 },
        { host: "::1", port: 9000 },
        { host: "example.com", port: 443 },
        { host: "127.0.0.1", port: 80 },
        { host: "127.0.0.1", port: 1023 },
        { host: "127.0.0.1", port: 1024 },
      ]),
    ).toEqual({ bridged: [1024, 3000, 9000], proxyOnly: [80, 1023] });
  });
});

describe("what a CLI may write and what it is not shown", () => {
  it("hides every other CLI's login, never its own", () => {
    const forClaude = deniedUnderHome("claude-code");
    expect(forClaude).toEqual(
      expect.arrayContaining([".ssh", ".aws", ".codex/auth.json", ".gemini/oauth_creds.json"]),
    );
    expect(forClaude).not.toContain(".claude/.credentials.json");
    expect(deniedUnderHome("exec")).toEqual(
      expect.arrayContaining([".claude/.credentials.json", ".codex/auth.json"]),
    );
  });

  it("lets a CLI write its own state and the tool caches, and nothing of another CLI", () => {
    expect(writableUnderHome("codex")).toEqual(expect.arrayContaining([".codex", ".npm"]));
    expect(writableUnderHome("codex")).not.toContain(".claude");
    expect(writableUnderHome("exec")).not.toContain(".codex");
  });
});

describe("what catherd judges by, whatever --allow-write names", () => {
  const own = {
    home: "/h/catherd",
    dir: "/h/catherd/runs/r/dispatches/n/D1",
    scratch: ["/h/catherd/runs/r/dispatches/n/D1/tmp", "/h/catherd/runs/r/dispatches/n/D1/locks"],
  };
  it.each([
    ["/srv/out", true],
    ["/h", true],
    ["/", true],
    ["/h/catherd-other", true],
    ["/h/catherd", false],
    ["/h/catherd/runs", false],
    ["/h/catherd/runs/r", false],
    ["/h/catherd/runs/r/dispatches", false],
    ["/h/catherd/runs/r/dispatches/n/D2", false],
    ["/h/catherd/runs/r/spend", false],
    ["/h/catherd/runs/r/worktrees", false],
    ["/h/catherd/.compile-cache", false],
    ["/h/catherd/demo", false],
    ["/h/catherd/runs/r/dispatches/n/D1", false],
    ["/h/catherd/runs/r/dispatches/n/D1/record.json", false],
    ["/h/catherd/runs/r/dispatches/n/D1/tmp", true],
    ["/h/catherd/runs/r/dispatches/n/D1/tmp/x", true],
    ["/h/catherd/runs/r/dispatches/n/D1/locks", true],
    ["/h/catherd/locks", true],
    ["/h/catherd/locks/heavy", true],
    ["/h/catherd/runs/r/worktrees/D1", true],
    ["/h/catherd/runs/r/worktrees/D1/src", true],
  ])("%s may stay writable: %s", (place, may) => {
    expect(sandboxMayWrite(place, own)).toBe(may);
  });

  it("keeps a dispatch folder outside any home read-only but for its scratch", () => {
    const loose = { home: "/h/catherd", dir: "/srv/folder", scratch: ["/srv/folder/tmp"] };
    expect(sandboxMayWrite("/srv", loose)).toBe(true);
    expect(sandboxMayWrite("/srv/folder", loose)).toBe(false);
    expect(sandboxMayWrite("/srv/folder/tmp", loose)).toBe(true);
  });

  it.each([
    ["/h/catherd/runs/r/worktrees/D1", true],
    ["/h/catherd/runs/r/worktrees", false],
    ["/h/catherd/runs/r/dispatches/worktrees", false],
    ["/h/catherd/runs/worktrees/x", false],
    ["/h/catherd/runs", false],
    ["/h/other/runs/r/worktrees/D1", false],
  ])("%s is a worktree of the home: %s", (place, is) => {
    expect(isWorktreePlace(place, "/h/catherd")).toBe(is);
  });
});

describe("a refusal in a failure line", () => {
  it.each([
    ["/usr/bin/sh: 1: cannot create /srv/out.txt: Read-only file system", "/srv/out.txt"],
    ["touch: cannot touch '/srv/a b': Read-only file system", "/srv/a b"],
    ["Error: EROFS: read-only file system, open '/srv/x.json'", "/srv/x.json"],
    ["mkdir: cannot create directory '/srv/d': Read-only file system", "/srv/d"],
    ["cp: /srv/y: Read-only file system", "/srv/y"],
    ["all good", null],
  ])("finds the write in %j", (line, file) => {
    expect(refusedWriteIn([line])).toBe(file);
  });

  it("names no flag for a write to what the sandbox keeps read-only whatever the flags say", () => {
    const account = { mode: "files" as const, denied: 0, firstDenied: null };
    const kept = ["/h/catherd", "/h/catherd/runs/r/dispatches/n/D1", "/srv/repo/.git/hooks"];
    expect(
      sandboxWords({ ...account, refusedWrite: "/h/catherd/runs/r/dispatches/n/D1/record.json" }, kept),
    ).toBe(
      "the sandbox refused a write to /h/catherd/runs/r/dispatches/n/D1/record.json: it stays read-only inside the sandbox, whatever --allow-write says",
    );
    expect(sandboxWords({ ...account, refusedWrite: "/srv/repo/.git/hooks/pre-commit" }, kept)).toContain(
      "it stays read-only inside the sandbox",
    );
    expect(sandboxWords({ ...account, refusedWrite: "/srv/out/a.txt" }, kept)).toBe(
      "the sandbox refused a write to /srv/out/a.txt: allow it with --allow-write /srv/out",
    );
  });

  it("names the flag that allows what was refused", () => {
    expect(
      sandboxWords({
        mode: "files+net",
        denied: 3,
        firstDenied: "registry.example:443",
        refusedWrite: "/srv/out/a.txt",
      }),
    ).toBe(
      "the sandbox refused a connection to registry.example:443 (and 2 more): allow it with --allow-net registry.example:443; the sandbox refused a write to /srv/out/a.txt: allow it with --allow-write /srv/out",
    );
    expect(sandboxWords({ mode: "files", denied: 0, firstDenied: null, refusedWrite: null })).toBeNull();
  });
});
