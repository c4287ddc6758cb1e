import { asRecord, asString, parseObject } from "./line-parsing.js";
import type { SessionProbe } from "./types.js";

/** The id of doctor's handshake request: no session of a dispatch ever uses it. */
const PROBE_ID = "catherd-probe";

/**
 * `doctor`'s check of a JSON-RPC session protocol on stdio (codex's app-server, gemini's ACP): `args`
 * start it, one request of `method` is its handshake, and the answer to that request — a result, or an
 * error in the CLI's words — says whether it starts. `what` names it in doctor's line.
 */
export function rpcProbe(
  what: string,
  args: readonly string[],
  handshake: { method: string; params: unknown; jsonrpc?: boolean },
): SessionProbe {
  const header = handshake.jsonrpc === true ? { jsonrpc: "2.0" } : {};
  const line = JSON.stringify({
    ...header,
    id: PROBE_ID,
    method: handshake.method,
    params: handshake.params,
  });
  return {
    args,
    lines: [line],
    judge(out: string) {
      const message = parseObject(out);
      if (message === null || message.id !== PROBE_ID) return null;
      const error = asString(asRecord(message.error)?.message);
      if (error !== null || message.result === undefined) {
        return { ok: false, detail: `${what} refused ${handshake.method}: ${error ?? "no result"}` };
      }
      return { ok: true, detail: `${what} answered ${handshake.method}` };
    },
  };
}
