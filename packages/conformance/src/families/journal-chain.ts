/**
 * The journal is verifiable (docs/file-format.md, "The digest chain"): each
 * event's digest is SHA-256 over the documented encoding of the digest
 * before it and its own fields — recomputed here by a reference encoder, not
 * by core — from the genesis digest, from a fork's source, or from the
 * anchor a prune leaves. `verify` re-hashes the chain and checks every CHECK
 * of the schema itself, so a damaged record (a flipped byte that breaks its
 * JSON, a changed digit that does not, two events swapped) is reported the
 * same by a read-only and a writable verify; reading such a record through
 * the API is `corrupt` with its sequence.
 */
import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import type { RunLease, VerifyReport } from "@runledger/core";
import type { Row } from "@runledger/core/port";
import { describe, expect, it } from "vitest";
import { type Fixtures, failureOf } from "../fixtures.js";
import { CREATE, copyInto, openRun, raw, runStore } from "./run-fixtures.js";

const GENESIS = Buffer.alloc(32);
const DOMAIN = Buffer.from("runledger journal event v1\0", "latin1");

/** An event row as stored, every column. */
type EventRow = Row & {
  sequence: number | bigint;
  event_id: string;
  idempotency_key: string | null;
  record: string;
  root_id: Uint8Array;
  root_node: Uint8Array | null;
  written_at: number | bigint;
  digest: Uint8Array;
};

/** The documented digest of an event, chained from `previous`. */
export function referenceDigest(previous: Uint8Array, row: EventRow): Buffer {
  const integer = (value: number | bigint) => {
    const bytes = Buffer.alloc(8);
    bytes.writeBigInt64BE(BigInt(value));
    return bytes;
  };
  const text = (value: string) => {
    const bytes = Buffer.from(value, "utf8");
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const key =
    row.idempotency_key === null
      ? Buffer.from([0])
      : Buffer.concat([Buffer.from([1]), text(row.idempotency_key)]);
  return createHash("sha256")
    .update(DOMAIN)
    .update(previous)
    .update(integer(row.sequence))
    .update(text(row.event_id))
    .update(key)
    .update(text(row.record))
    .update(row.root_id)
    .update(integer(row.written_at))
    .digest();
}

const EVENTS = `SELECT sequence, event_id, idempotency_key, record, root_id, root_node, written_at, digest
FROM journal ORDER BY sequence`;

async function eventRows(lease: RunLease): Promise<EventRow[]> {
  return (await lease.lease.read((scope) => scope.execute(EVENTS))).rows as EventRow[];
}

async function anchorOf(lease: RunLease): Promise<{ sequence: number; digest: string } | null> {
  const { rows } = await lease.lease.read((scope) =>
    scope.execute("SELECT sequence, lower(hex(digest)) AS digest FROM journal_anchor"),
  );
  const row = rows[0];
  return row === undefined ? null : { sequence: Number(row.sequence), digest: String(row.digest) };
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

/** Each stored digest against the reference encoder, chained from `from`. */
function expectChained(rows: EventRow[], from: Uint8Array): void {
  let previous = from;
  for (const row of rows) {
    expect(hex(row.digest), `event ${row.sequence}`).toBe(hex(referenceDigest(previous, row)));
    previous = row.digest;
  }
}

/** A SQL literal for a stored value. */
function literal(value: unknown): string {
  if (value === null) return "NULL";
  if (value instanceof Uint8Array) return `X'${hex(value)}'`;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return `'${String(value).replaceAll("'", "''")}'`;
}

const COLUMNS = [
  "sequence",
  "event_id",
  "idempotency_key",
  "record",
  "root_id",
  "root_node",
  "written_at",
  "digest",
] as const;

/** The statement that writes `row` back as stored, at `sequence`. */
function insertRow(row: EventRow, sequence: number): string {
  const values = COLUMNS.map((column) => (column === "sequence" ? sequence : row[column]));
  return `INSERT INTO journal (${COLUMNS.join(", ")}) VALUES (${values.map(literal).join(", ")})`;
}

/** Records of equal length whose numbers a test may change a digit of. */
const RECORDS = [
  { step: "fetch", amount: 1111 },
  { step: "parse", amount: 2222 },
  { step: "build", amount: 3333 },
  { step: "ship!", amount: 4444 },
];

/**
 * A run of four events (RECORDS, in order), its store closed and — for a
 * local file — switched to rollback-journal mode on a raw connection, so
 * that its bytes are the whole run and a read-only open needs no WAL index.
 */
async function fourEvents(fx: Fixtures): Promise<{ location: string; rows: EventRow[] }> {
  const written = fx.location();
  const store = runStore(fx);
  const lease = await store.open(written, { create: CREATE });
  await lease.transact(async (tx) => {
    for (const record of RECORDS) await tx.journal.append(record);
  });
  const rows = await eventRows(lease);
  await lease.release();
  await store.close();
  return { location: await selfContained(fx, written), rows };
}

/**
 * A local run's file as one self-contained file: copied alone once its store
 * closed (a driver whose handle closes later may still touch the original's
 * side files), then switched to rollback-journal mode on a raw connection.
 * A remote location as it is.
 */
async function selfContained(fx: Fixtures, location: string): Promise<string> {
  if (!fx.has("files")) return location;
  const copy = await copyInto(fx, location);
  await raw(fx, copy, ["PRAGMA journal_mode = DELETE"]);
  return copy;
}

/** Replaces `from` by `to` (same length) at each place the file's bytes hold it. */
async function editBytes(location: string, from: string, to: string): Promise<void> {
  const bytes = await readFile(location);
  const needle = Buffer.from(from, "utf8");
  let found = 0;
  for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + 1)) {
    Buffer.from(to, "utf8").copy(bytes, at);
    found++;
  }
  expect(found, `the file holds ${from}`).toBeGreaterThan(0);
  await writeFile(location, bytes);
}

/** verify's report through a writable and through a read-only open. */
async function verifyBoth(
  fx: Fixtures,
  location: string,
): Promise<{ writable: VerifyReport; readOnly: VerifyReport }> {
  const verifyWith = async (readOnly: boolean) => {
    const store = runStore(fx);
    const lease = await store.open(location, readOnly ? { readOnly: true } : {});
    try {
      return await lease.verify();
    } finally {
      await lease.release();
    }
  };
  const readOnly = await verifyWith(true);
  const writable = await verifyWith(false);
  return { writable, readOnly };
}

export function describeJournalChain(fx: Fixtures): void {
  describe("journal digest chain", () => {
    it("chains every event from the genesis digest by the documented encoding, keyed and applied events too", async () => {
      const lease = await openRun(fx, fx.location());
      await lease.transact(async (tx) => {
        await tx.journal.append({ n: 1, text: "ünïcødé ✓" });
        await tx.journal.append({ n: 2 }, { key: "the-key" });
        await tx.workspace.apply({ put: { "a.txt": "one" } });
        // Larger than the bytes core keeps for digest inputs (64 KiB): laid out apart.
        await tx.journal.append({ n: 2.5, text: "ü".repeat(40_000) });
      });
      // A new lease: its first append reads the newest event instead of guessing it.
      await lease.release();
      const again = await openRun(fx, lease.location);
      await again.transact((tx) => tx.journal.append({ n: 3 }));
      await again.transact((tx) => tx.journal.append({ n: 4 }));
      const rows = await eventRows(again);
      expect(rows.map((row) => Number(row.sequence))).toEqual([1, 2, 3, 4, 5, 6]);
      expectChained(rows, GENESIS);
      expect(await anchorOf(again)).toBeNull();
      expect(await again.verify()).toMatchObject({ ok: true, problems: [] });
    });

    fx.needs("walSharedMemory").it(
      "never chains from a guess a rollback left, when another handle wrote the same sequence at the same root",
      async () => {
        const lease = await openRun(fx, fx.location());
        await lease.transact((tx) => tx.journal.append({ n: 1 }));
        // This lease's guess becomes event 2 as it wrote it, then the write is undone.
        await expect(
          lease.transact(async (tx) => {
            await tx.journal.append({ n: "undone" });
            throw new Error("roll back");
          }),
        ).rejects.toThrow("roll back");
        const other = await runStore(fx).open(lease.location);
        await other.transact((tx) => tx.journal.append({ n: 2 }));
        await other.release();
        // Event 2 has the guessed sequence and root, not the guessed digest: the guess is stale.
        await lease.transact((tx) => tx.journal.append({ n: 3 }));
        expectChained(await eventRows(lease), GENESIS);
        expect(await lease.verify()).toMatchObject({ ok: true, problems: [] });
      },
    );

    it("stays verifiable after a prune: the anchor records the digest before the oldest event kept", async () => {
      const lease = await openRun(fx, fx.location());
      for (let n = 1; n <= 6; n++) await lease.transact((tx) => tx.journal.append({ n }));
      const before = await eventRows(lease);
      await lease.transact((tx) => tx.workspace.prune({ before: 4 }));
      expect(await anchorOf(lease)).toEqual({ sequence: 4, digest: hex(before[2]!.digest) });
      expect(await lease.verify()).toMatchObject({ ok: true, problems: [] });
      // A prune that drops nothing leaves the anchor; a later one moves it on.
      await lease.transact((tx) => tx.workspace.prune({ before: 2 }));
      expect((await anchorOf(lease))?.sequence).toBe(4);
      await lease.transact((tx) => tx.journal.append({ n: 7 }));
      await lease.transact(async (tx) => {
        await tx.workspace.prune({ before: 6 });
        await tx.workspace.collectGarbage();
      });
      const kept = await eventRows(lease);
      expect(kept.map((row) => Number(row.sequence))).toEqual([6, 7]);
      expectChained(kept, before[4]!.digest);
      expect(await lease.verify()).toMatchObject({ ok: true, problems: [] });
    });

    it("reports a prefix of the journal deleted without the anchor a prune writes", async () => {
      const lease = await openRun(fx, fx.location());
      for (let n = 1; n <= 4; n++) await lease.transact((tx) => tx.journal.append({ n }));
      await lease.release();
      await raw(fx, lease.location, ["DELETE FROM journal WHERE sequence < 3"]);
      const reopened = await openRun(fx, lease.location);
      expect((await reopened.verify()).problems).toEqual([
        "journal: the oldest event is 3, and no anchor says where it chains from (a run starts at 1)",
        "journal: the digest chain breaks at event 3: its digest is not that of its fields and of the digest before it",
      ]);
    });

    it("starts a fork's chain from the source's digest at the fork point, named in its first event", async () => {
      const source = await openRun(fx, fx.location());
      for (let n = 1; n <= 3; n++) {
        await source.transact((tx) => tx.workspace.apply({ put: { [`f${n}.txt`]: `${n}` } }));
      }
      const sourceRows = await eventRows(source);
      await source.release();
      const store = runStore(fx);
      const cases = [
        { at: { sequence: 2 }, from: sourceRows[1]! },
        { at: undefined, from: sourceRows[2]! },
      ];
      for (const { at, from } of cases) {
        const forked = await store.fork(source.location, fx.location(), {
          create: { ...CREATE, runId: "forked" },
          ...(at === undefined ? {} : { at }),
        });
        const target = forked.lease;
        await target.transact((tx) => tx.journal.append({ after: "fork" }));
        const rows = await eventRows(target);
        expect(JSON.parse(rows[0]!.record).from.digest).toBe(hex(from.digest));
        expect(await anchorOf(target)).toEqual({ sequence: 1, digest: hex(from.digest) });
        expectChained(rows, from.digest);
        expect(await target.verify()).toMatchObject({ ok: true, problems: [] });
        await target.release();
      }
    });

    const BROKEN_AT = 2;
    const damages = [
      {
        name: "a flipped byte in a record, breaking its JSON",
        needs: ["files"] as const,
        damage: (location: string) => editBytes(location, '{"step":"parse"', 'z"step":"parse"'),
        problems: [
          `journal sequence ${BROKEN_AT} breaks CHECK (json_valid(record) AND json_type(record) = 'object')`,
          `journal: the digest chain breaks at event ${BROKEN_AT}: its digest is not that of its fields and of the digest before it`,
        ],
      },
      {
        name: "a changed digit in a record, still valid JSON",
        needs: ["files"] as const,
        damage: (location: string) => editBytes(location, '"amount":2222', '"amount":2722'),
        problems: [
          `journal: the digest chain breaks at event ${BROKEN_AT}: its digest is not that of its fields and of the digest before it`,
        ],
      },
      {
        name: "a swapped pair of events, sequences kept",
        needs: [] as const,
        damage: async (location: string, rows: EventRow[]) => {
          // The newest two, written back in each other's place (events are never updated).
          await raw(fx, location, [
            "DELETE FROM journal WHERE sequence >= 3",
            insertRow(rows[3]!, 3),
            insertRow(rows[2]!, 4),
          ]);
        },
        problems: [
          "journal: the digest chain breaks at event 3: its digest is not that of its fields and of the digest before it (and 1 more link after it)",
        ],
      },
    ];
    for (const { name, needs, damage, problems } of damages) {
      fx.needs(...needs).it(`finds ${name}, read-only and writable alike`, async () => {
        const { location, rows } = await fourEvents(fx);
        expect((await verifyBoth(fx, location)).readOnly).toMatchObject({ ok: true });
        await damage(location, rows);
        const { writable, readOnly } = await verifyBoth(fx, location);
        expect(readOnly.problems).toEqual(problems);
        expect(writable.problems).toEqual(problems);
        expect([readOnly.ok, writable.ok]).toEqual([false, false]);
      });
    }

    const ignoringChecks = fx
      .needs("local")
      .because("sqld refuses PRAGMA ignore_check_constraints, which writes the rows to find");
    ignoringChecks.it(
      "reports each row that breaks a CHECK of the schema, read-only and writable alike",
      async () => {
        const { location } = await fourEvents(fx);
        // Written by a raw connection that has SQLite skip its CHECKs.
        await raw(fx, location, [
          "PRAGMA ignore_check_constraints = ON",
          "UPDATE run SET workflow_id = ''",
          "INSERT INTO workspace_pin (name, root_id, created_at) VALUES ('', X'00', 0)",
          "INSERT INTO journal_anchor (singleton, sequence, digest) VALUES (1, 0, X'00')",
          `INSERT INTO journal (sequence, event_id, record, root_id, written_at, digest)
SELECT 5, 'raw', '[5]', root_id, 0, zeroblob(31) FROM workspace_current`,
        ]);
        const { writable, readOnly } = await verifyBoth(fx, location);
        expect(readOnly.problems).toEqual(writable.problems);
        expect(readOnly.problems.filter((line) => line.includes("breaks CHECK"))).toEqual([
          "run singleton 1 breaks CHECK (length(workflow_id) BETWEEN 1 AND 256)",
          "journal sequence 5 breaks CHECK (json_valid(record) AND json_type(record) = 'object')",
          "journal sequence 5 breaks CHECK (length(digest) = 32)",
          "journal_anchor singleton 1 breaks CHECK (sequence >= 1)",
          "journal_anchor singleton 1 breaks CHECK (length(digest) = 32)",
          'workspace_pin name "" breaks CHECK (length(name) BETWEEN 1 AND 256)',
          'workspace_pin name "" breaks CHECK (length(root_id) = 32)',
        ]);
      },
    );

    fx.needs("files").it(
      "reads a record whose JSON a flipped byte broke as corrupt, naming its sequence",
      async () => {
        const { location } = await fourEvents(fx);
        await editBytes(location, '{"step":"parse"', 'z"step":"parse"');
        for (const readOnly of [true, false]) {
          const lease = await runStore(fx).open(location, readOnly ? { readOnly: true } : {});
          const listed = await failureOf(() => lease.read((r) => r.journal.list()));
          expect([listed.code, listed.details?.sequence], `readOnly: ${readOnly}`).toEqual([
            "corrupt",
            BROKEN_AT,
          ]);
          expect(listed.message).toMatch(
            /journal event 2 is damaged: its record is not valid JSON/,
          );
          const streamed = await failureOf(() =>
            lease.read(async (r) => {
              for await (const _ of r.journal.stream()) {
                // read through to the damaged event
              }
            }),
          );
          expect([streamed.code, streamed.details?.sequence]).toEqual(["corrupt", BROKEN_AT]);
          // The events before it read as they were.
          const first = await lease.read((r) => r.journal.list({ limit: 1 }));
          expect(first.map((event) => event.record)).toEqual([RECORDS[0]]);
          await lease.release();
        }
      },
    );

    fx.needs("files").it(
      "refuses a keyed append whose first event's record was damaged as corrupt, not as a conflict",
      async () => {
        const location = fx.location();
        const store = runStore(fx);
        const lease = await store.open(location, { create: CREATE });
        await lease.transact((tx) => tx.journal.append({ step: "parse" }, { key: "k" }));
        await lease.release();
        await store.close();
        const copy = await selfContained(fx, location);
        await editBytes(copy, '{"step":"parse"', 'z"step":"parse"');
        const reopened = await openRun(fx, copy);
        const error = await failureOf(() =>
          reopened.transact((tx) => tx.journal.append({ step: "other" }, { key: "k" })),
        );
        expect([error.code, error.details?.sequence]).toEqual(["corrupt", 1]);
      },
    );
  });
}
