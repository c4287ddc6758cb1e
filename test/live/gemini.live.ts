import { defineContract } from "./contract.js";

defineContract("gemini");
