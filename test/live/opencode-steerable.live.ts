import { defineContract } from "./contract.js";

// The contract's cases for opencode over its steerable transport (specs/steering.md, "Which backends"):
// catherd's bridge running `opencode serve` on the channel, ended by the supervisor's end line once its
// conversation is over. Each must end with the verdict it has over `run --format json`.
defineContract("opencode", { steerable: true });
