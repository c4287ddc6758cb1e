// The bridge's HTTP client of its `opencode serve`: every request with a deadline (a server that is still
// starting, or loaded, can leave a request hanging), HTTP Basic with the password the bridge gave the
// server, answers read as text and JSON, bounded in size.

/** An answer: its status and body (JSON when it parses, else null). */
export interface ServeAnswer {
  status: number;
  text: string;
  json: unknown;
}

/** The most of an answer's body the bridge reads (a message list of a few messages fits many times). */
const MAX_BODY_CHARS = 8 * 1024 * 1024;

export class ServeClient {
  private readonly auth: string;

  constructor(
    readonly url: string,
    password: string,
  ) {
    this.auth = `Basic ${Buffer.from(`opencode:${password}`).toString("base64")}`;
  }

  /** One request; throws on a network failure or when no answer came within `deadlineMs`. */
  async call(method: string, path: string, body?: unknown, deadlineMs = 30_000): Promise<ServeAnswer> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: { authorization: this.auth, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(deadlineMs),
    });
    const text = (await response.text()).slice(0, MAX_BODY_CHARS);
    return { status: response.status, text, json: parseJson(text) };
  }

  /** The event stream's response (its body read by the caller); the deadline holds for its headers only. */
  async events(signal: AbortSignal, deadlineMs = 30_000): Promise<Response> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), deadlineMs);
    signal.addEventListener("abort", () => controller.abort(), { once: true });
    try {
      return await fetch(`${this.url}/event`, {
        headers: { authorization: this.auth, accept: "text/event-stream" },
        signal: controller.signal,
      });
    } finally {
      clearTimeout(timer);
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return text.length === 0 ? null : JSON.parse(text);
  } catch {
    return null;
  }
}
