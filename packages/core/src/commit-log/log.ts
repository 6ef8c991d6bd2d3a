/**
 * A commit log: one SQLite database (./schema-v1.ts) reached through a
 * DatabaseAccess. It hands out units of work, resumes the ones a stopped
 * process left behind, checks chunks, and answers reads.
 */

import { RunledgerError } from "../port/errors.js";
import { checkNames } from "../port/options.js";
import { checkChunks } from "./chunks.js";
import type { DatabaseAccess, LogContext } from "./context.js";
import { LogReader } from "./reader.js";
import { createUnit } from "./staging.js";
import type { ChunkCheck, ContentSource } from "./types.js";
import { CommitUnit, UNIT_OPTIONS, type UnitOptions } from "./unit.js";

/** What `log.begin()` takes: a unit's options, and its txn id. */
export interface BeginOptions extends UnitOptions {
  /** The unit's txn id; default a new random one. A txn id the log already knows is refused. */
  readonly txnId?: string;
}

/** Set once by the class below: the one way to reach a log's private access. */
let accessOf: (log: CommitLog) => DatabaseAccess;

/**
 * The database access of a log: transactions and snapshots on the log's own
 * tables, for tools and test suites that inspect (or deliberately damage)
 * them. Nothing here checks what such SQL does; the log's own methods are
 * the way to use a log.
 */
export function commitLogAccess(log: CommitLog): DatabaseAccess {
  return accessOf(log);
}

export class CommitLog {
  static {
    accessOf = (log) => log.#access;
  }

  readonly #access: DatabaseAccess;
  readonly #context: LogContext;
  readonly #release: () => Promise<void>;
  /** This log's own id, fixed when it was created. */
  readonly logId: string;

  /** @internal Opened through CommitLogStore. */
  constructor(
    access: DatabaseAccess,
    context: LogContext,
    logId: string,
    release: () => Promise<void>,
  ) {
    this.#access = access;
    this.#context = context;
    this.logId = logId;
    this.#release = release;
  }

  get location(): string {
    return this.#access.location;
  }

  /** Starts a unit of work. */
  async begin(options: BeginOptions = {}): Promise<CommitUnit> {
    checkNames(options, ["txnId", ...UNIT_OPTIONS], "begin's options");
    const txnId = options.txnId ?? this.#context.newId();
    if (typeof txnId !== "string" || txnId.length < 1 || txnId.length > 128) {
      throw new RunledgerError("invalid_argument", "a txn id is a string of 1 to 128 characters");
    }
    const now = this.#context.clock();
    await this.#access.transact((tx) => createUnit(tx, txnId, now));
    return new CommitUnit(this.#access, this.#context, txnId, "staging", options);
  }

  /**
   * The unit with this txn id, as the staging area holds it: a sealed unit
   * (its commit started and did not finish) is committed by `commit()`, which
   * lands only what had not landed; a done unit answers its result again; a
   * unit whose process stopped while staging can only be abandoned.
   */
  async resume(txnId: string, options: UnitOptions = {}): Promise<CommitUnit> {
    checkNames(options, UNIT_OPTIONS, "resume's options");
    const state = await this.#access.read(async (reader) => {
      const { rows } = await reader.execute("SELECT state FROM unit WHERE txn_id = ?", [txnId]);
      return rows[0]?.state;
    });
    if (state === undefined) {
      throw new RunledgerError(
        "unit_not_found",
        `this log holds no unit with txn id ${JSON.stringify(txnId)} (never begun, or abandoned)`,
        { details: { txnId } },
      );
    }
    const unitState = state === "staging" ? "incomplete" : state === "sealed" ? "sealed" : "done";
    return new CommitUnit(this.#access, this.#context, txnId, unitState, options);
  }

  /** Checks that every content the log's commits put is in the chunk store, re-storing from `source`. */
  checkChunks(options: { txnId?: string; source?: ContentSource } = {}): Promise<ChunkCheck> {
    const scope = options.txnId === undefined ? { all: true as const } : { txnId: options.txnId };
    return checkChunks(this.#access, scope, options.source);
  }

  /** Reads in one consistent snapshot. */
  read<T>(fn: (reader: LogReader) => Promise<T>): Promise<T> {
    return this.#access.read((scope) => fn(new LogReader(scope)));
  }

  /** Gives the log back to its store. */
  release(): Promise<void> {
    return this.#release();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
