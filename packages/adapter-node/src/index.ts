export { type NodeDriverOptions, nodeDriver } from "./driver.js";
