import type { Command } from "./command-io.js";

export const mcpCommand: Command<null> = {
  name: "mcp",
  synopsis: "",
  positionals: 0,
  summary:
    "Serves catherd's verbs as MCP tools on stdin/stdout (dispatch, wait, result, status, show, logs, " +
    "cancel, doctor), the prompt catherd-guide, and a logging notification when a dispatch it made is " +
    "recorded. Exits when stdin closes or on SIGTERM/SIGINT; every dispatch keeps running and is recorded " +
    "as usual. Registering it with Claude Code, Codex, Gemini CLI and opencode: README.md. The tools: " +
    "specs/mcp.md.",
  options: {},
  async handler() {
    // The MCP SDK loads here and only here: dispatch and the supervisor never pay for it.
    const { serveStdio } = await import("./mcp/mcp-server.js");
    return serveStdio();
  },
};
