import { defineContract } from "./contract.js";

defineContract("opencode");
