import { defineContract } from "./contract.js";

defineContract("codex");
