import { defineContract } from "./contract.js";

// The contract's cases for gemini inside `--sandbox files+net` (specs/sandbox.md), only the mock model's port
// allowed: a sandbox must not change how a run ends — its provider's failures, hangs and orphans included.
defineContract("gemini", { sandboxed: true });
