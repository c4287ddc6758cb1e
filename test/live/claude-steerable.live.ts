import { defineContract } from "./contract.js";

// The contract's cases for Claude Code over its steerable transport (specs/steering.md, "Which
// backends"): stream-json input on the channel, the session ended by end_session. Each must end as it
// does over the plain one.
defineContract("claude", { steerable: true });
