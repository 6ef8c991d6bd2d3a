import {
  finishStagedImage,
  RunledgerError,
  type StagedDatabase,
  sqliteVersionNumber,
} from "@runledger/core/port";
import type BetterSqlite3 from "better-sqlite3";
import { NodeConnection } from "./connection.js";
import { translate } from "./errors.js";

/**
 * A new database built in memory, then written at its location whole
 * (`Driver.stage`, see @runledger/core's port/staged-file.ts): creating a
 * run costs one write and one sync instead of SQLite's syncs in place.
 */
export class StagedNodeDatabase extends NodeConnection implements StagedDatabase {
  readonly #db: BetterSqlite3.Database;
  readonly #place: (image: Uint8Array) => boolean;

  /** `place` writes the finished image at the location: `NodeRuntime.publish`. */
  constructor(
    db: BetterSqlite3.Database,
    cacheSize: number,
    place: (image: Uint8Array) => boolean,
  ) {
    super(db, cacheSize);
    this.#db = db;
    this.#place = place;
  }

  async publish(): Promise<boolean> {
    let image: Uint8Array;
    try {
      if (this.#db.inTransaction) {
        throw new RunledgerError(
          "internal_error",
          "a staged database was published inside a transaction; report this as a bug",
        );
      }
      image = finishStagedImage(this.#db.serialize(), versionNumber(this.#db));
    } catch (error) {
      throw translate(error, "cannot finish a staged database");
    } finally {
      await this.close();
    }
    return this.#place(image);
  }
}

let version: number | undefined;

/** The library's SQLITE_VERSION_NUMBER, read once: every handle of a process shares one library. */
function versionNumber(db: BetterSqlite3.Database): number {
  version ??= sqliteVersionNumber(String(db.prepare("SELECT sqlite_version()").pluck().get()));
  return version;
}
