import { defineContract } from "./contract.js";

// The contract's cases for gemini over its steerable transport (specs/steering.md, "Which backends"):
// `gemini --acp` on the channel, stopped once its conversation is over. Each must end with the verdict it
// has over `--output-format stream-json`.
defineContract("gemini", { steerable: true });
