/**
 * A read snapshot of an embedded replica, served from its file. The client
 * sends every transaction of an embedded replica to its server, reads
 * included; only a statement outside a transaction is answered from the
 * file. So a snapshot here is a run of such statements, and it is a
 * snapshot because nothing changes the file while it runs: the file changes
 * only when it syncs — as a run opens, after a write of this connection
 * (never during one of its reads: core runs one operation at a time on a
 * connection), and in the background only with `syncInterval`, in which case
 * the driver does not use this and the server serves the snapshot. A
 * statement that could write is refused before it is sent (`read_only`).
 */
import type { Client } from "@libsql/client";
import {
  type DriverTransaction,
  type QueryResult,
  type SqlValue,
  transactionClosedError,
} from "@runledger/core/port";
import { translate } from "./errors.js";
import { readOnlyRefusal, remoteResult } from "./remote.js";
import { toDriverParams } from "./values.js";

/** What a read snapshot may send: a query, or a PRAGMA that only reads. */
const READS =
  /^\s*(SELECT|WITH|EXPLAIN|VALUES)\b|^\s*PRAGMA\s+[A-Za-z_][A-Za-z0-9_.]*(\([^)]*\))?\s*$/i;

export class ReplicaRead implements DriverTransaction {
  readonly #client: Client;
  #finished = false;

  constructor(client: Client) {
    this.#client = client;
  }

  get active(): boolean {
    return !this.#finished;
  }

  async execute(sql: string, params: readonly SqlValue[] = []): Promise<QueryResult> {
    this.#checkOpen();
    if (!READS.test(sql) || /^\s*WITH\b[\s\S]*\b(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(sql)) {
      throw readOnlyRefusal(
        "write",
        "a read snapshot of an embedded replica is served from its file",
      );
    }
    try {
      return remoteResult(await this.#client.execute({ sql, args: toDriverParams(params) }));
    } catch (error) {
      throw translate(error, "statement failed", true);
    }
  }

  async executeScript(): Promise<void> {
    this.#checkOpen();
    throw readOnlyRefusal(
      "run a script",
      "a read snapshot of an embedded replica is served from its file",
    );
  }

  async commit(): Promise<void> {
    this.#checkOpen();
    this.#finished = true;
  }

  async rollback(): Promise<void> {
    this.#checkOpen();
    this.#finished = true;
  }

  #checkOpen(): void {
    if (this.#finished) throw transactionClosedError();
  }
}
