/**
 * The two refusals of a driver's transaction session, in one wording for
 * every adapter: a second `begin` on a connection whose transaction is still
 * open, and a call on a transaction that has already ended. The conformance
 * suite asks each adapter for both codes.
 */
import { RunledgerError } from "./errors.js";

/** `transaction_active`: `begin` while this connection's transaction is still open. */
export function transactionActiveError(): RunledgerError {
  return new RunledgerError(
    "transaction_active",
    "a transaction is already open on this connection; commit or roll it back first",
  );
}

/** `transaction_closed`: a call on a transaction after its commit or rollback. */
export function transactionClosedError(): RunledgerError {
  return new RunledgerError(
    "transaction_closed",
    "this transaction has already committed or rolled back; start a new one",
  );
}
