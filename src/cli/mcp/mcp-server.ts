import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { StandbyReserve } from "../../dispatch/start/standby-reserve.js";
import { asCatherdError, CatherdError } from "../../domain/errors.js";
import { catherdVersion } from "../../infra/catherd-version.js";
import { systemClock } from "../../infra/clock.js";
import { waitUntil, wakeWhenSettled } from "../../infra/wait-until.js";
import { GUIDE } from "../guide-command.js";
import { inputSchemaOf, inToolTerms, parsedInputOf } from "./input.js";
import { type QuestionNotice, type RecordedNotice, RecordNotifier } from "./notices.js";
import { TOOLS, type ToolSpec } from "./tools.js";

// `catherd mcp`: the verbs of the command line as MCP tools on stdio (specs/mcp.md). The SDK's low-level
// Server is used rather than McpServer so that arguments are checked here: a bad argument is a tool
// result with isError and the E_… code and fix the command line gives, never a protocol error.

export const GUIDE_PROMPT = "catherd-guide";

/** How long shutting down waits for dispatch calls in flight, so that none is left half-admitted. */
const DISPATCH_DRAIN_MS = 700;

const INSTRUCTIONS =
  "catherd runs coding-agent CLIs and commands under a detached supervisor and keeps each one's record " +
  "on disk. dispatch returns at once; wait (at most timeoutS, call it again) returns the records that are " +
  `done and snapshots of the rest; result gives the reply. The prompt ${GUIDE_PROMPT} has the whole guide.`;

/** A server session: the SDK server, and how to close it without losing a dispatch in flight. */
export interface CatherdMcp {
  server: Server;
  close(): Promise<void>;
}

/** A catherd MCP server, not yet connected to a transport (tests connect it in memory). */
export function createCatherdServer(): CatherdMcp {
  const server = new Server(
    { name: "catherd", version: catherdVersion(import.meta.url) ?? "0.0.0" },
    { capabilities: { tools: {}, prompts: {}, logging: {} }, instructions: INSTRUCTIONS },
  );
  const notifier = new RecordNotifier((notice) => {
    server.sendLoggingMessage(loggingOf(notice)).catch(() => {
      // The client is gone: the record is on disk, which is what counts.
    });
  });
  const session: Session = {
    notifier,
    dispatching: new Set(),
    reserve: new StandbyReserve({ keeps: true }),
  };
  registerTools(server, session);
  registerGuidePrompt(server);
  return { server, close: () => closeSession(server, session) };
}

/** What the tool calls of one server share, and what closing it settles. */
interface Session {
  /** Tells the client of each record (and question) of the dispatches this server made. */
  notifier: RecordNotifier;
  /** The dispatch calls in flight, which closing waits for (bounded). */
  dispatching: Set<Promise<unknown>>;
  /** A standby supervisor ready between dispatch calls (specs/mcp.md, "The session"). */
  reserve: StandbyReserve;
}

/** tools/list from TOOLS, and tools/call: a read ends when the client gives up, a dispatch never does. */
function registerTools(server: Server, { notifier, dispatching, reserve }: Session): void {
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputSchemaOf(tool) as { type: "object" },
      annotations: {
        title: tool.title,
        readOnlyHint: tool.readOnly,
        destructiveHint: tool.name === "cancel",
        openWorldHint: false,
      },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const tool = TOOLS.find((t) => t.name === request.params.name);
    if (tool === undefined) {
      return errorResult(
        new CatherdError("E_INPUT_INVALID", `no tool ${JSON.stringify(request.params.name)}`, {
          fix: `use one of ${TOOLS.map((t) => t.name).join(", ")}`,
        }),
      );
    }
    if (tool.madeDispatches === undefined) {
      return untilAborted(callTool(tool, request.params.arguments, null, null), extra.signal);
    }
    // A dispatch runs to its end even when the client goes: admitted and started, or not admitted at all.
    const call = callTool(tool, request.params.arguments, notifier, reserve);
    dispatching.add(call);
    try {
      return await call;
    } finally {
      dispatching.delete(call);
    }
  });
}

/** prompts/list and prompts/get: the one prompt, GUIDE_PROMPT, the guide for orchestrators. */
function registerGuidePrompt(server: Server): void {
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [
      {
        name: GUIDE_PROMPT,
        title: "How to use catherd well",
        description: "When to queue, when to fall back, how to read a record: the guide for orchestrators.",
      },
    ],
  }));

  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    if (request.params.name !== GUIDE_PROMPT) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `no prompt ${request.params.name}; there is ${GUIDE_PROMPT}`,
      );
    }
    return {
      description: "How to use catherd well",
      messages: [{ role: "user" as const, content: { type: "text" as const, text: GUIDE } }],
    };
  });
}

/**
 * Stops notifying, gives the dispatch calls in flight up to DISPATCH_DRAIN_MS to finish admitting, then
 * closes the standby and the server.
 */
async function closeSession(server: Server, { notifier, dispatching, reserve }: Session): Promise<void> {
  notifier.close();
  let drained = false;
  const inFlight = Promise.allSettled([...dispatching]).then(() => {
    drained = true;
  });
  await waitUntil(() => (drained ? true : undefined), {
    clock: systemClock,
    deadline: systemClock.now() + DISPATCH_DRAIN_MS,
    pollMs: DISPATCH_DRAIN_MS,
    watch: wakeWhenSettled(inFlight),
  });
  reserve.close();
  await server.close();
}

/**
 * Runs one tool: its arguments become the command's input, its data the structured result. A tool that
 * makes a dispatch is given the server's standby reserve, from which its use case takes its supervisor.
 */
async function callTool(
  tool: ToolSpec,
  args: unknown,
  notifier: RecordNotifier | null,
  reserve: StandbyReserve | null,
): Promise<CallToolResult> {
  try {
    const input = parsedInputOf(tool, args);
    const result = await tool.command.handler(input, {
      stdinIsOurs: false,
      ...(reserve === null ? {} : { standbys: reserve }),
    });
    for (const dir of tool.madeDispatches?.(result.data) ?? []) notifier?.watch(dir);
    // The structured result also as text (the MCP specification's SHOULD): a client that passes on only
    // `content` loses nothing.
    return {
      content: [
        { type: "text", text: tool.line(result.data) },
        { type: "text", text: JSON.stringify(result.data) },
      ],
      structuredContent: result.data as Record<string, unknown>,
    };
  } catch (error) {
    return errorResult(asCatherdError(error), tool);
  }
}

/**
 * A tool error as the command line prints it — the code and message, then the fix — in the tool's terms
 * when it came from one (its arguments, not the command line's flags), the error object as text too.
 */
function errorResult(error: CatherdError, tool?: ToolSpec): CallToolResult {
  const words = (text: string) => (tool === undefined ? text : inToolTerms(text));
  const json = {
    ...error.toJSON(),
    message: words(error.message),
    ...(error.fix === undefined ? {} : { fix: words(error.fix) }),
  };
  const fix = json.fix === undefined ? "" : `\nfix: ${json.fix}`;
  return {
    isError: true,
    content: [
      { type: "text", text: `error ${json.code}: ${json.message}${fix}` },
      { type: "text", text: JSON.stringify({ error: json }) },
    ],
    structuredContent: { error: json },
  };
}

/** A read that the client gave up on ends at once; what it was reading is left as it is. */
function untilAborted(call: Promise<CallToolResult>, signal: AbortSignal): Promise<CallToolResult> {
  if (signal.aborted) return Promise.resolve(errorResult(interrupted()));
  return new Promise((resolve) => {
    const onAbort = () => resolve(errorResult(interrupted()));
    signal.addEventListener("abort", onAbort, { once: true });
    call
      .then(resolve, (error: unknown) => resolve(errorResult(asCatherdError(error))))
      .finally(() => {
        signal.removeEventListener("abort", onAbort);
      });
  });
}

function interrupted(): CatherdError {
  return new CatherdError("E_INTERRUPTED", "the client cancelled the call", { fix: "call it again" });
}

function loggingOf(notice: RecordedNotice | QuestionNotice) {
  if (notice.event === "question") return { level: "notice" as const, logger: "catherd", data: notice };
  return {
    level: notice.status === "ok" || notice.status === "cancelled" ? ("info" as const) : ("warning" as const),
    logger: "catherd",
    data: notice,
  };
}

/**
 * Serves on stdin/stdout until stdin closes, the client goes, or SIGTERM/SIGINT/SIGHUP; then exits within
 * a second — dispatch calls in flight finish admitting first (bounded), reads in flight are dropped.
 * Every dispatch keeps running under its own supervisor and is recorded as usual.
 */
export async function serveStdio(): Promise<never> {
  const mcp = createCatherdServer();
  const transport = new StdioServerTransport();
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    // Whatever hangs, the process is gone within a second.
    setTimeout(() => process.exit(code), 950);
    mcp.close().then(
      () => process.exit(code),
      () => process.exit(code),
    );
  };
  process.stdin.on("end", () => stop(0));
  process.stdin.on("close", () => stop(0));
  process.stdout.on("error", () => stop(0)); // EPIPE: the client is gone
  process.on("SIGTERM", () => stop(143));
  process.on("SIGINT", () => stop(130));
  process.on("SIGHUP", () => stop(129));
  mcp.server.onclose = () => stop(0);
  await mcp.server.connect(transport);
  return new Promise<never>(() => {});
}
