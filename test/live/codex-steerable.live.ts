import { defineContract } from "./contract.js";

// The contract's cases for codex over its steerable transport (specs/steering.md, "Which backends"):
// `codex app-server` on the channel, stopped once its conversation is over. Each must end with the
// verdict it has over `exec --json`.
defineContract("codex", { steerable: true });
