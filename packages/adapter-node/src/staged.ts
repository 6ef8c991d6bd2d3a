import {
  finishStagedImage,
  RunledgerError,
  type StagedDatabase,
  sqliteVersionNumber,
} from "@runledger/core/port";
import type BetterSqlite3 from "better-sqlite3";
import { NodeConnection } from "./connection.js";
import { translate } from "./errors.js";

/** Where a staged database is placed, and how. */
export interface Placement {
  /** The location `publish` places it at. */
  readonly location: string;
  /** False when something is at `location`; throws what an open there would refuse. */
  mayPlace(location: string): Promise<boolean>;
  /** Writes a finished image at `location` whole: `NodeRuntime.publish`. */
  place(location: string, image: Uint8Array): boolean;
}

/**
 * A new database built in memory, then written at its location whole
 * (`Driver.stage`, see @runledger/core's port/staged-file.ts): creating a
 * run costs one write and one sync instead of SQLite's syncs in place. Its
 * copies (`placeCopy`) are what core's kept template places each new run from.
 */
export class StagedNodeDatabase extends NodeConnection implements StagedDatabase {
  readonly #db: BetterSqlite3.Database;
  readonly #placement: Placement;

  constructor(db: BetterSqlite3.Database, cacheSize: number, placement: Placement) {
    super(db, cacheSize);
    this.#db = db;
    this.#placement = placement;
  }

  /** The image as this connection sees it now, its open transaction's writes included. */
  async placeCopy(location: string): Promise<boolean> {
    if (!(await this.#placement.mayPlace(location))) return false;
    let image: Uint8Array;
    try {
      image = this.#finishedImage();
    } catch (error) {
      throw translate(error, "cannot copy a staged database");
    }
    return this.#placement.place(location, image);
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
      image = this.#finishedImage();
    } catch (error) {
      throw translate(error, "cannot finish a staged database");
    } finally {
      await this.close();
    }
    return this.#placement.place(this.#placement.location, image);
  }

  /** The database as this connection sees it now, as a file at its location would hold it. */
  #finishedImage(): Uint8Array {
    return finishStagedImage(this.#db.serialize(), versionNumber(this.#db));
  }
}

let version: number | undefined;

/** The library's SQLITE_VERSION_NUMBER, read once: every handle of a process shares one library. */
function versionNumber(db: BetterSqlite3.Database): number {
  version ??= sqliteVersionNumber(String(db.prepare("SELECT sqlite_version()").pluck().get()));
  return version;
}
