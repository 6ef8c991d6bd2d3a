import fs from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ABANDONED_STAGING_MS,
  finishStagedImage,
  isStagingFile,
  type PublishFileSystem,
  publishFile,
  removeAbandonedStaging,
  sqliteVersionNumber,
  stagingPath,
} from "../src/port/staged-file.js";
import { refusal, temporaryDirectory } from "./fixtures.js";

const directory = () => temporaryDirectory("runledger-staged-");

/** A new in-memory database's first page as `serialize` gives it: magic, rollback format, counters 0. */
function memoryImage(): Uint8Array {
  const image = new Uint8Array(4096);
  image.set(new TextEncoder().encode("SQLite format 3\u0000"), 0);
  image[18] = 1;
  image[19] = 1;
  image[100] = 13;
  return image;
}

describe("finishing a staged image", () => {
  it("writes WAL format, the counters of one creating commit and the library's version, and nothing else", () => {
    const before = memoryImage();
    const after = finishStagedImage(memoryImage(), 3_050_004);
    const view = new DataView(after.buffer);
    expect([after[18], after[19]]).toEqual([2, 2]);
    expect(view.getUint32(24)).toBe(2);
    expect(view.getUint32(92)).toBe(2);
    expect(view.getUint32(96)).toBe(3_050_004);
    const changed = [...after.keys()].filter((i) => after[i] !== before[i]);
    expect(changed).toEqual([18, 19, 27, 95, 97, 98, 99]);
  });

  it("refuses an image that is not a new in-memory database's, as an adapter's bug", () => {
    const notSqlite = new Uint8Array(4096);
    const written = memoryImage();
    new DataView(written.buffer).setUint32(24, 7);
    for (const image of [notSqlite, written, memoryImage().subarray(0, 50)]) {
      expect(refusal(() => finishStagedImage(image, 3_050_004)).code).toBe("internal_error");
    }
  });

  it("reads sqlite_version() as SQLITE_VERSION_NUMBER", () => {
    expect(sqliteVersionNumber("3.50.4")).toBe(3_050_004);
    expect(sqliteVersionNumber("3.9.0")).toBe(3_009_000);
  });
});

describe("staging names", () => {
  it("stages beside the location, hidden, one name a location, and only staging names are taken for one", () => {
    expect(stagingPath("/runs/a.db")).toBe("/runs/.a.db.creating");
    expect(isStagingFile(".a.db.creating")).toBe(true);
    for (const name of ["a.db", "a.creating", ".a.db", ".a.db-wal"]) {
      expect(isStagingFile(name), name).toBe(false);
    }
  });
});

/** A staging file as a killed creator leaves it, last written `ageMs` ago. */
function leftStaging(path: string, ageMs: number): string {
  const staging = stagingPath(path);
  fs.writeFileSync(staging, "half a database");
  const when = new Date(Date.now() - ageMs);
  fs.utimesSync(staging, when, when);
  return staging;
}

describe("publishing a file", () => {
  it("places the bytes at a free location whole and leaves no staging file", () => {
    const dir = directory();
    const path = join(dir, "run.db");
    const image = new TextEncoder().encode("the whole database");
    expect(publishFile(path, image, fs)).toBe(true);
    expect(fs.readFileSync(path, "utf8")).toBe("the whole database");
    expect(fs.readdirSync(dir)).toEqual(["run.db"]);
  });

  it("changes nothing at a taken location, even an empty file, and answers false", () => {
    const dir = directory();
    const path = join(dir, "run.db");
    fs.writeFileSync(path, "");
    expect(publishFile(path, new Uint8Array([1, 2, 3]), fs)).toBe(false);
    expect(fs.readFileSync(path).byteLength).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(["run.db"]);
  });

  it("leaves a live creator's staging file alone and answers false, writing nothing", () => {
    const dir = directory();
    const path = join(dir, "run.db");
    const staging = leftStaging(path, 0);
    expect(publishFile(path, new Uint8Array([1, 2, 3]), fs)).toBe(false);
    expect(fs.existsSync(path)).toBe(false);
    expect(fs.readFileSync(staging, "utf8")).toBe("half a database");
  });

  it("removes a killed creator's staging file, older than the limit, and publishes", () => {
    const dir = directory();
    const path = join(dir, "run.db");
    leftStaging(path, ABANDONED_STAGING_MS + 1_000);
    expect(publishFile(path, new TextEncoder().encode("mine"), fs)).toBe(true);
    expect(fs.readFileSync(path, "utf8")).toBe("mine");
    expect(fs.readdirSync(dir)).toEqual(["run.db"]);
  });

  it("beside an existing location, removes only an abandoned staging file", () => {
    const dir = directory();
    const path = join(dir, "run.db");
    fs.writeFileSync(path, "a run");
    const staging = leftStaging(path, 0);
    removeAbandonedStaging(path, fs);
    expect(fs.existsSync(staging)).toBe(true);
    leftStaging(path, ABANDONED_STAGING_MS + 1_000);
    removeAbandonedStaging(path, fs);
    expect(fs.readdirSync(dir)).toEqual(["run.db"]);
  });

  it("syncs the bytes before they appear at the location", () => {
    const dir = directory();
    const calls: string[] = [];
    /** node:fs's call, noted by name first. */
    const noted =
      <A extends unknown[], R>(name: string, call: (...args: A) => R) =>
      (...args: A): R => {
        calls.push(name);
        return call(...args);
      };
    const traced: PublishFileSystem = {
      openSync: noted("open", fs.openSync),
      writeSync: noted("write", (fd: number, buffer: Uint8Array) => fs.writeSync(fd, buffer)),
      fsyncSync: noted("fsync", fs.fsyncSync),
      closeSync: noted("close", fs.closeSync),
      linkSync: noted("link", fs.linkSync),
      rmSync: noted("rm", fs.rmSync),
      statSync: noted("stat", (path: string) => fs.statSync(path)),
    };
    expect(publishFile(join(dir, "run.db"), new Uint8Array(10), traced)).toBe(true);
    expect(calls).toEqual(["open", "write", "fsync", "close", "link", "rm"]);
    // durability "full": the directory is synced too, once the name is there.
    calls.length = 0;
    const path = join(dir, "full.db");
    expect(publishFile(path, new Uint8Array(10), traced, { syncDirectory: true })).toBe(true);
    expect(calls).toEqual([
      "open",
      "write",
      "fsync",
      "close",
      "link",
      "rm",
      "open",
      "fsync",
      "close",
    ]);
  });

  it("answers false, leaving nothing, on a file system that makes no hard links (the open then creates in place)", () => {
    const dir = directory();
    const path = join(dir, "run.db");
    const noLinks: PublishFileSystem = {
      ...fs,
      linkSync: () => {
        throw Object.assign(new Error("EPERM: operation not permitted, link"), { code: "EPERM" });
      },
    };
    expect(publishFile(path, new Uint8Array(10), noLinks)).toBe(false);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it("turns a full disk into disk_full, with node's error as cause, and leaves nothing", () => {
    const dir = directory();
    const path = join(dir, "run.db");
    const full = Object.assign(new Error("ENOSPC: no space left on device, write"), {
      code: "ENOSPC",
    });
    const failing: PublishFileSystem = {
      ...fs,
      writeSync: () => {
        throw full;
      },
    };
    const error = refusal(() => publishFile(path, new Uint8Array(10), failing));
    expect(error.code).toBe("disk_full");
    expect(error.cause).toBe(full);
    expect(error.message).toMatch(/nothing was written at that location/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
