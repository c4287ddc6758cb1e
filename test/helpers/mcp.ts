import * as fs from "node:fs";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, expect } from "vitest";
import { createCatherdServer } from "../../src/cli/mcp/mcp-server.js";
import { isolatedHome } from "./cli.js";
import { FAKE_AGENT, reapAll, tempDir } from "./folders.js";

/** What a tool call gave back, unpacked. */
export interface ToolAnswer {
  isError: boolean;
  /** The first text block: the one line for people. */
  text: string;
  data: Record<string, unknown>;
}

/** An MCP client and the logging notifications it has received. */
export interface McpSession {
  client: Client;
  notices: Record<string, unknown>[];
  /** The level of each notice, in the same order. */
  levels: string[];
  call(name: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<ToolAnswer>;
  close(): Promise<void>;
}

/** Connects the SDK's Client over `transport` and keeps every logging notification. */
export async function connectClient(transport: Transport, onClose: () => Promise<void>): Promise<McpSession> {
  const client = new Client({ name: "catherd-test", version: "1" });
  const notices: Record<string, unknown>[] = [];
  const levels: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    notices.push(n.params.data as Record<string, unknown>);
    levels.push(n.params.level);
  });
  await client.connect(transport);
  return {
    client,
    notices,
    levels,
    async call(name, args = {}, timeoutMs = 60_000) {
      const result = await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs });
      const content = result.content as { type: string; text?: string }[];
      const data = (result.structuredContent ?? {}) as Record<string, unknown>;
      // Every answer carries its structured content as text too (the MCP specification's SHOULD), so a
      // client that passes on only `content` loses nothing.
      if (JSON.stringify(JSON.parse(content[1]?.text ?? "null")) !== JSON.stringify(data)) {
        throw new Error(`${name}: the second text block is not the structured content: ${content[1]?.text}`);
      }
      return { isError: result.isError === true, text: content[0]?.text ?? "", data };
    },
    async close() {
      await client.close();
      await onClose();
    },
  };
}

/** catherd's MCP server in this process, connected to a client in memory. */
export async function inProcessSession(): Promise<McpSession> {
  const mcp = createCatherdServer();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(serverSide);
  return connectClient(clientSide, () => mcp.close());
}

/**
 * A fresh in-process session for each test of the file, in a home of its own (CATHERD_HOME and an empty
 * CATHERD_RUN for the server, which reads them from this process; put back after): the dispatches added
 * to `dispatched` are reaped after each test, and anything of theirs left running fails it.
 */
export function useInProcessSession(): { readonly session: McpSession; dispatched: string[] } {
  const dispatched: string[] = [];
  const saved = { home: process.env.CATHERD_HOME, run: process.env.CATHERD_RUN };
  let current: McpSession | null = null;
  beforeEach(async () => {
    process.env.CATHERD_HOME = isolatedHome().env.CATHERD_HOME;
    process.env.CATHERD_RUN = "";
    current = await inProcessSession();
  });
  afterEach(async () => {
    await current?.close();
    current = null;
    process.env.CATHERD_HOME = saved.home;
    process.env.CATHERD_RUN = saved.run;
    expect(reapAll(dispatched.splice(0)), "processes left running").toBe(0);
  });
  return {
    get session() {
      if (current === null) throw new Error("no MCP session outside a test");
      return current;
    },
    dispatched,
  };
}

/** A scenario file for the fake agent. */
export function scenarioFile(steps: Record<string, unknown>[]): string {
  const file = path.join(tempDir(), "scenario.json");
  fs.writeFileSync(file, JSON.stringify({ steps }));
  return file;
}

/** The dispatch tool's arguments that run the fake agent (exec) on a scenario. */
export function fakeDispatch(name: string, steps: Record<string, unknown>[]): Record<string, unknown> {
  return {
    backend: "exec",
    name,
    killGrace: "300ms",
    args: [process.execPath, FAKE_AGENT, scenarioFile(steps)],
  };
}

/** One codex event line for the fake agent to print. */
export function codexLine(event: Record<string, unknown>): { out: string } {
  return { out: JSON.stringify(event) };
}
