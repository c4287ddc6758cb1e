#!/usr/bin/env node
// The opencode bridge program: `node opencode-bridge.js <opencode> [flags] [-- serve args]`, the agent
// process of a steerable opencode dispatch (src/infra/opencode-bridge/run-bridge.ts).
import { runBridge } from "../infra/opencode-bridge/run-bridge.js";

process.exitCode = await runBridge(process.argv.slice(2));
process.exit();
