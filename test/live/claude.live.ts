import { defineContract } from "./contract.js";

defineContract("claude");
