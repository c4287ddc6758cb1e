import * as fs from "node:fs";
import * as path from "node:path";
import { ROOT, tempDir } from "./folders.js";

// The fake `ssh` of `npm test` (test/fixtures/fake-ssh.mjs says what it takes and does): a folder holding an
// executable `ssh` to put first on PATH, the description of the one host it reaches, and the log of its
// calls. The "host" is this machine seen through sshd's eyes — its stripped environment, a home of its own,
// the paths it is told it lacks — so that the supervisor it starts is a real process a test can see and
// end by pid. The real client and sshd: test/helpers/sshd.ts and `npm run test:ssh`.

const FIXTURE = path.join(ROOT, "test/fixtures/fake-ssh.mjs");

/** The host name the fake knows, as `--placement ssh:<host>` gives it. */
export const FAKE_HOST = "fakehost";

/** How the fake answers one call (fake-ssh.mjs): run it, fail as ssh, never answer, or fail remotely. */
export type FakeSshMode = "ok" | "refused" | "hang" | "no-commands";

/** The host the fake reaches, as host.json says it. */
export interface FakeHost {
  hosts: string[];
  /** HOME there: the folder the remote command starts in, whose .profile a login shell reads. */
  home: string;
  /** The user's login shell there (sshd runs `$SHELL -c REMOTE`). */
  shell: string;
  /** Paths the host does not have: rewritten under a root that does not exist there. */
  hide: string[];
  /** The mode of each call by its index; `otherwise` for the calls past them. */
  modes: FakeSshMode[];
  otherwise: FakeSshMode;
}

/** One call of the fake, as it logged it. */
export interface FakeSshCall {
  argv: string[];
  mode: string;
  /** What the caller gave on stdin (the scripts of `sh -s`). */
  stdin: string;
  /** The call was not how catherd calls ssh: the fake refused it. */
  refused: boolean;
}

export interface FakeSsh {
  /** The folder to put first on PATH. */
  bin: string;
  host: string;
  /** HOME on the host. */
  home: string;
  /** Changes the host's description for the calls from now on; `modes` index from the first call. */
  set(change: Partial<FakeHost>): void;
  /** Every call so far, in order. */
  calls(): FakeSshCall[];
  /** `env` with the fake first on its PATH. */
  env(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
}

/** A fake ssh reaching FAKE_HOST, every call `ok` until told otherwise; its folders are the test's. */
export function fakeSsh(): FakeSsh {
  const bin = tempDir("catherd-fake-ssh-");
  const home = tempDir("catherd-fake-host-home-");
  let host: FakeHost = { hosts: [FAKE_HOST], home, shell: "/bin/sh", hide: [], modes: [], otherwise: "ok" };
  const write = () => fs.writeFileSync(path.join(bin, "host.json"), JSON.stringify(host));
  write();
  const q = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
  fs.writeFileSync(
    path.join(bin, "ssh"),
    `#!/bin/sh\nFAKE_SSH_DIR=${q(bin)}; export FAKE_SSH_DIR\nexec ${q(process.execPath)} ${q(FIXTURE)} "$@"\n`,
    { mode: 0o755 },
  );
  const log = path.join(bin, "calls.log");
  return {
    bin,
    host: FAKE_HOST,
    home,
    set(change) {
      host = { ...host, ...change };
      write();
    },
    calls: () =>
      fs.existsSync(log)
        ? fs
            .readFileSync(log, "utf8")
            .split("\n")
            .filter(Boolean)
            .map((line) => JSON.parse(line) as FakeSshCall)
        : [],
    env: (env) => ({ ...env, PATH: `${bin}:${env.PATH ?? ""}` }),
  };
}

/**
 * A folder for the host's login PATH holding `node` (`nodeBody` as a node script, else this node) and a
 * `catherd` symlink to the built CLI, and the `.profile` in the host's HOME that greets and puts it first:
 * what a user's login shell there finds when the submitting host's paths are not there.
 */
export function loginPath(ssh: FakeSsh, nodeBody?: string): string {
  const dir = path.join(ssh.home, "tools");
  fs.mkdirSync(dir, { recursive: true });
  const node = path.join(dir, "node");
  if (nodeBody === undefined) fs.symlinkSync(process.execPath, node);
  else fs.writeFileSync(node, `#!${process.execPath}\n${nodeBody}\n`, { mode: 0o755 });
  fs.symlinkSync(path.join(ROOT, "dist/bin/catherd.js"), path.join(dir, "catherd"));
  // A profile that talks on stdout, as many do (a greeting, a version manager's notice).
  const profile = `echo "Welcome to ${ssh.host}"\nPATH='${dir}':"$PATH"; export PATH\n`;
  fs.writeFileSync(path.join(ssh.home, ".profile"), profile);
  return dir;
}

/** The submitting host's node and catherd install: hidden, the start script must find them on the login PATH. */
export function installPaths(): string[] {
  return [process.execPath, path.join(ROOT, "dist")];
}
