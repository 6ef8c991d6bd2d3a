import { fromSqliteFailure, isRunledgerError } from "@runledger/core/port";

// Inside an adapter's execute: the driver threw; translate it before rethrowing.
const driverError = Object.assign(new Error("FOREIGN KEY constraint failed"), {
  code: "SQLITE_CONSTRAINT_FOREIGNKEY",
});
const failure = fromSqliteFailure(driverError.code, "cannot insert", driverError);
if (isRunledgerError(failure, "constraint_foreign_key")) {
  console.log(failure.sqlitePrimaryCode); // "SQLITE_CONSTRAINT"
}
console.log(failure.cause === driverError); // true
