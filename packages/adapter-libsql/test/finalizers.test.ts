import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { libsqlDriver } from "@runledger/adapter-libsql";
import { afterEach, describe, expect, it } from "vitest";
import { BYTES_PER_TURN, STATEMENTS_PER_TURN } from "../src/finalizers.js";

// @libsql/client frees each statement from a Node-API finalizer that runs only
// when the event loop turns (see src/finalizers.ts). These tests stand in for
// a caller that only ever awaits promises: without the adapter's turns, an
// immediate scheduled before the loop would never run during it.

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0))
    rmSync(directory, { recursive: true, force: true });
});

async function openConnection() {
  const directory = mkdtempSync(join(tmpdir(), "runledger-libsql-turns-"));
  directories.push(directory);
  return libsqlDriver().open(join(directory, "turns.db"), {
    create: true,
    readOnly: false,
    busyTimeoutMs: 1000,
  });
}

describe("adapter-libsql lets statement finalizers run", () => {
  it("turns the event loop within every STATEMENTS_PER_TURN statements outside a transaction", async () => {
    const connection = await openConnection();
    try {
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      for (let i = 0; i < STATEMENTS_PER_TURN && !turned; i++) await connection.execute("SELECT 1");
      expect(turned).toBe(true);
    } finally {
      await connection.close();
    }
  });

  it("turns the event loop inside a long transaction too", async () => {
    const connection = await openConnection();
    try {
      const transaction = await connection.begin("immediate");
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      for (let i = 0; i < STATEMENTS_PER_TURN && !turned; i++) {
        await transaction.execute("SELECT ?", [i]);
      }
      expect(turned).toBe(true);
      await transaction.commit();
    } finally {
      await connection.close();
    }
  });

  it("does not turn it for a handful of statements", async () => {
    const connection = await openConnection();
    try {
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      for (let i = 0; i < 8; i++) await connection.execute("SELECT 1");
      expect(turned).toBe(false);
    } finally {
      await connection.close();
    }
  });
});

describe("adapter-libsql lets the blobs bound to statements go", () => {
  it("turns the event loop once BYTES_PER_TURN bytes were bound, before STATEMENTS_PER_TURN statements", async () => {
    const connection = await openConnection();
    try {
      const chunk = new Uint8Array(256 * 1024);
      const needed = Math.ceil(BYTES_PER_TURN / chunk.byteLength);
      expect(needed).toBeLessThan(STATEMENTS_PER_TURN);
      let turned = false;
      setImmediate(() => {
        turned = true;
      });
      let statements = 0;
      while (!turned && statements < STATEMENTS_PER_TURN) {
        await connection.execute("SELECT length(?)", [chunk]);
        statements++;
      }
      expect(turned).toBe(true);
      expect(statements).toBeLessThanOrEqual(needed);
    } finally {
      await connection.close();
    }
  });
});
