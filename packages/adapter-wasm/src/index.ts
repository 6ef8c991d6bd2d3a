export { wasmDriver } from "./driver.js";
