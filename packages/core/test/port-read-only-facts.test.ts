/**
 * The facts a read-only open is planned from (port/read-only-facts.ts), read
 * from real files through node:fs the way both file-backed adapters pass it.
 */
import * as fs from "node:fs";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readOnlyFacts, type SyncFileReads } from "../src/port/read-only-facts.js";

const directory = mkdtempSync(join(tmpdir(), "runledger-read-only-facts-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let next = 0;
const fresh = () => join(directory, `db-${++next}.sqlite`);

describe("readOnlyFacts", () => {
  it("reads the first 100 bytes of the file, the -wal's size and whether a -shm exists", () => {
    const path = fresh();
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => i % 251);
    writeFileSync(path, bytes);
    writeFileSync(`${path}-wal`, new Uint8Array(8272));
    writeFileSync(`${path}-shm`, new Uint8Array(0));
    const facts = readOnlyFacts(path, fs);
    expect([...facts.header]).toStrictEqual([...bytes.subarray(0, 100)]);
    expect(facts.walBytes).toBe(8272);
    expect(facts.shm).toBe(true);
  });

  it("gives a short file's header as it is and no side files where there are none", () => {
    const path = fresh();
    writeFileSync(path, "SQLite");
    expect(readOnlyFacts(path, fs)).toStrictEqual({
      header: new TextEncoder().encode("SQLite"),
      walBytes: undefined,
      shm: false,
    });
  });

  it("reads a missing file as an empty header, leaving its refusal to SQLite, and creates nothing", () => {
    const path = fresh();
    expect(readOnlyFacts(path, fs)).toStrictEqual({
      header: new Uint8Array(0),
      walBytes: undefined,
      shm: false,
    });
    expect(fs.readdirSync(directory).filter((name) => name.startsWith(`db-${next}`))).toEqual([]);
  });

  it("closes the file it opened even when the read fails", () => {
    const closed: number[] = [];
    const failing: SyncFileReads = {
      openSync: () => 7,
      readSync: () => {
        throw new Error("EIO");
      },
      closeSync: (fd) => closed.push(fd),
      statSync: () => ({ size: 0 }),
    };
    expect(readOnlyFacts("/x.db", failing)).toStrictEqual({
      header: new Uint8Array(0),
      walBytes: 0,
      shm: true,
    });
    expect(closed).toEqual([7]);
  });
});
