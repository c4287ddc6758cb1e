import { CatherdError } from "../../domain/errors.js";
import type { EngineTarget } from "../engine.js";

// The host of `--placement ssh:HOST` (specs/placement.md, "SSH"): given to ssh as its destination, which the
// user's own ssh configuration resolves (aliases, ports, keys, ProxyJump). Checked when the request is
// read, and again before every ssh call: a host that starts with `-` would be read by ssh as an option
// (`-oProxyCommand=…` runs a command), and one holding whitespace or a shell metacharacter is no host name
// and would mean something else to a shell. Pure, and loaded with the request.

/** A destination ssh takes: `host`, `alias`, `user@host`, an IPv4 address; letters, digits, `.`, `_`, `-`, `@`. */
const HOST = /^[A-Za-z0-9_][A-Za-z0-9._@-]*$/;
/** DNS's longest name, with room for a user. */
export const MAX_HOST_CHARS = 253;

export const sshTarget: EngineTarget = {
  value: "ssh:<host>",
  check: checkHost,
};

/** The host as given, when ssh can only read it as a destination; else E_INPUT_INVALID. */
export function checkHost(host: string): string {
  const shown = JSON.stringify(host.slice(0, 80));
  const fix =
    "give the host as your ssh configuration names it (an alias, host or user@host: letters, digits, . _ - @): --placement ssh:box";
  if (host.length === 0) {
    throw new CatherdError("E_INPUT_INVALID", "--placement ssh: names no host", { fix });
  }
  if (host.length > MAX_HOST_CHARS) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `the ssh host ${shown}… is longer than ${MAX_HOST_CHARS} characters`,
      {
        fix,
      },
    );
  }
  if (host.startsWith("-")) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `the ssh host ${shown} starts with "-": ssh would read it as an option`,
      {
        fix,
      },
    );
  }
  if (!HOST.test(host)) {
    throw new CatherdError(
      "E_INPUT_INVALID",
      `the ssh host ${shown} holds a character no host name has (whitespace, a shell metacharacter, a control character)`,
      { fix },
    );
  }
  return host;
}
