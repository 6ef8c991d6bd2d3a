export { type LibsqlDriverOptions, libsqlDriver } from "./driver.js";
