/**
 * The raw @libsql/client doing a runledger step's writes on a server, for
 * the remote suite: a tree node row and a journal event row, the sizes a
 * one-file step writes, in one write transaction each step. Two shapes:
 * "one" sends the transaction as one request (a batch: BEGIN, the rows,
 * COMMIT, each running only if the one before it succeeded), the floor of
 * any transactional step on this protocol; "two" sends the event first and
 * reads its answer, then the node with COMMIT — runledger's own shape.
 */
import { randomBytes } from "node:crypto";
import { createClient, type InStatement } from "@libsql/client";

export type RawShape = "one" | "two";

const SCHEMA = [
  "CREATE TABLE node (id BLOB PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID",
  "CREATE TABLE event (sequence INTEGER PRIMARY KEY, event_id TEXT NOT NULL UNIQUE, record TEXT NOT NULL, root_id BLOB NOT NULL, written_at INTEGER NOT NULL, digest BLOB NOT NULL)",
];

export async function rawSteps(
  url: string,
  shape: RawShape,
): Promise<{ step(i: number): Promise<void>; close(): void }> {
  const client = createClient({ url });
  await client.batch(SCHEMA, "write");
  const rows = (i: number): [InStatement, InStatement] => {
    const root = randomBytes(32);
    return [
      {
        sql: "INSERT INTO event (sequence, event_id, record, root_id, written_at, digest) VALUES (?, ?, ?, ?, ?, ?)",
        args: [
          i + 1,
          `e-${i}-${randomBytes(8).toString("hex")}`,
          `{"step":${i}}`,
          root,
          Date.now(),
          randomBytes(32),
        ],
      },
      { sql: "INSERT INTO node (id, data) VALUES (?, ?)", args: [root, randomBytes(200)] },
    ];
  };
  return {
    async step(i) {
      const [event, node] = rows(i);
      if (shape === "one") {
        await client.batch([event, node], "write");
        return;
      }
      const tx = await client.transaction("write");
      try {
        await tx.execute(event);
        await tx.batch([node, "COMMIT"]);
      } finally {
        tx.close();
      }
    },
    close: () => client.close(),
  };
}
