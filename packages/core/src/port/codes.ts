/**
 * Every stable error code, as one closed list. It exists so that a program
 * can branch on `error.code` with the compiler's help (a typo is a type
 * error, a `switch` can be exhaustive) and so that RunledgerError can only be
 * built with a code that is documented: docs/errors.md lists exactly these,
 * and a test in packages/core/test checks both directions.
 */

export const ERROR_CODES = [
  // What SQLite answered, translated by every adapter.
  "busy",
  "constraint_foreign_key",
  "constraint_unique",
  "constraint_not_null",
  "constraint_check",
  "constraint_datatype",
  "constraint",
  "not_a_database",
  "corrupt",
  "cannot_open",
  "read_only",
  "permission_denied",
  "disk_full",
  "io_error",
  "too_big",
  "type_mismatch",
  "sql_error",
  "interrupted",
  "out_of_memory",
  "storage_error",
  // The drivers themselves.
  "invalid_location",
  "connection_closed",
  "transaction_active",
  "transaction_closed",
  "journal_mode_refused",
  "kysely_transaction_refused",
  "encryption_key_refused",
  // Remote libSQL servers.
  "transaction_timeout",
  "stream_expired",
  "server_unreachable",
  "connection_lost",
  "auth_refused",
  // Connections and transactions.
  "provider_closed",
  "lease_released",
  "transaction_reentered",
  "savepoint_overlap",
  "callback_escaped",
  "write_in_read",
  "poisoned",
  "run_in_use",
  "remove_unsupported",
  "catalog_missing",
  "listing_unsupported",
  // Recognizing a database.
  "not_found",
  "needs_recovery",
  "foreign_database",
  "partial_initialization",
  "unsupported_version",
  "schema_mismatch",
  "encoding_mismatch",
  "remote_unsupported",
  "run_identity_mismatch",
  // Runs and the journal.
  "invalid_json",
  "invalid_argument",
  "idempotency_conflict",
  "invalid_stop_reason",
  "invalid_state",
  "run_finished",
  "run_not_running",
  "run_not_stopped",
  // The workspace.
  "invalid_path",
  "path_not_found",
  "path_conflict",
  "not_a_file",
  "not_a_directory",
  "root_not_found",
  "invalid_content",
  "fork_target_not_empty",
  "copy_source_not_found",
  "expectation_failed",
  // The runledger CLI.
  "usage",
  "verify_failed",
  "internal_error",
  // Typed changes and the commit log.
  "invalid_change",
  "unit_exists",
  "unit_not_found",
  "unit_closed",
  "unit_incomplete",
  "chunk_missing",
  "reconcile_failed",
  "read_model_mismatch",
  // The datastore and the v2/v3 route.
  "datastore_format_unsupported",
  "invalid_format_marker",
  "format_opt_in_refused",
  "datastore_format_changed",
  "unscoped_write_refused",
  "unit_binding_refused",
  "document_exists",
  "document_not_found",
  "reconcile_refused",
  "vault_path_outside_root",
] as const;

/** One of the stable codes a RunledgerError carries (docs/errors.md). */
export type RunledgerErrorCode = (typeof ERROR_CODES)[number];
