import * as os from "node:os";

// The names the dashboard answers to and the one it prints (specs/ui.md, "Security": "Its own name only").

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** Every `host:port` a browser may name this server by: the address it listens on (all of the machine's for 0.0.0.0). */
export function hostsFor(host: string, port: number): Set<string> {
  const names = new Set<string>();
  const add = (h: string) => names.add(`${bracket(h)}:${port}`.toLowerCase());
  if (LOOPBACK.has(host) || host === "0.0.0.0" || host === "::") for (const h of LOOPBACK) add(h);
  if (host === "0.0.0.0" || host === "::") {
    add(os.hostname());
    for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) add(a.address);
  } else add(host);
  return names;
}

/**
 * The `host:port` of the printed address: 127.0.0.1 for any loopback name, the machine's name when it
 * listens on every address (0.0.0.0 means nothing to a browser), else the host as given.
 */
export function shownAuthority(host: string, port: number): string {
  const shown = LOOPBACK.has(host) ? "127.0.0.1" : host === "0.0.0.0" || host === "::" ? os.hostname() : host;
  return `${bracket(shown)}:${port}`;
}

/** An IPv6 address in brackets, as a URL's authority writes it. */
function bracket(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}
