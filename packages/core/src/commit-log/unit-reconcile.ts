/**
 * Reconciliation: a datastore bound to a unit of work (through its hook's
 * DocumentReconciler) already holds every document the unit staged, so where
 * a staged change does not land the document is put back to what the log
 * holds — after commit, every key of a refused or held-back partition; on
 * abandon, every key staged. The keys are read from the staged ops (the
 * staging area, and the buffer on abandon) before they are deleted, a page
 * at a time, each key once. A failed reconciliation (`reconcile_failed`)
 * leaves the staged ops in place, so commit() or abandon() again reconciles
 * again: putting a document back is idempotent.
 */
import { RunledgerError } from "../port/errors.js";
import { sha256Hex } from "../port/hash.js";
import { keysetPages } from "../port/keyset.js";
import type { DatabaseAccess } from "./context.js";
import { LogReader, landedContentMissing, reconciledKey } from "./reader.js";
import type { StagingBuffer } from "./staging.js";
import type { ContentSource, DocumentReconciler, LandedVersion, ReconciledKey } from "./types.js";

const PAGE = 512;

/** What reconciling a unit reads and writes through. */
export interface ReconcileParts {
  readonly txnId: string;
  readonly access: DatabaseAccess;
  readonly reconcilers: ReadonlySet<DocumentReconciler>;
  /** The unit's buffer: staged ops not yet spilled (read for `all`). */
  readonly buffer: StagingBuffer;
  readonly contentSource: ContentSource | undefined;
}

/**
 * Puts every attached datastore's documents back to what the log holds, for
 * the keys whose staged change did not land: `unlanded` — the keys of
 * refused and held-back batches (after the batches were decided); `all` —
 * every key staged, in the staging area and still in the buffer (abandon).
 * Answers the keys put back, by partition then key.
 */
export async function reconcileUnit(
  unit: ReconcileParts,
  which: "unlanded" | "all",
): Promise<ReconciledKey[]> {
  if (unit.reconcilers.size === 0) return [];
  const seen = new Set<string>();
  const reconciled: ReconciledKey[] = [];
  const apply = async (keys: { partition: string; key: string }[]) => {
    const fresh = keys.filter(({ partition, key }) => {
      const id = `${partition}\u0000${key}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
    if (fresh.length === 0) return;
    const versions = await unit.access.read((reader) =>
      new LogReader(reader).landedVersions(fresh),
    );
    const complete: LandedVersion[] = [];
    for (const version of versions) complete.push(await withBytes(unit, version));
    let applied = false;
    try {
      for (const reconciler of unit.reconcilers) {
        if (await reconciler.reconcile(complete)) applied = true;
      }
    } catch (error) {
      throw reconcileFailed(unit.txnId, error);
    }
    if (!applied) return;
    for (const version of complete) reconciled.push(reconciledKey(version));
  };
  const states = which === "all" ? "'staged', 'committed', 'refused', 'held'" : "'refused', 'held'";
  const pages = keysetPages({
    start: { batch: -1, ordinal: -1 },
    page: (after, limit) =>
      unit.access.read(
        async (reader) =>
          (
            await reader.execute(
              `SELECT o.batch, o.ordinal, b.partition, o.key FROM staged_op o
JOIN unit_batch b ON b.txn_id = o.txn_id AND b.batch = o.batch
WHERE o.txn_id = ? AND b.state IN (${states})
  AND (o.batch > ? OR (o.batch = ? AND o.ordinal > ?))
ORDER BY o.batch, o.ordinal LIMIT ?`,
              [unit.txnId, after.batch, after.batch, after.ordinal, limit],
            )
          ).rows,
      ),
    keyOf: (last) => ({ batch: Number(last.batch), ordinal: Number(last.ordinal) }),
    limit: PAGE,
  });
  for await (const rows of pages) {
    await apply(rows.map((row) => ({ partition: String(row.partition), key: String(row.key) })));
  }
  if (which === "all") {
    const { buffer } = unit;
    for (let at = 0; at < buffer.rows.length; at += PAGE) {
      await apply(
        buffer.rows.slice(at, at + PAGE).map((row) => ({
          partition: buffer.batches.get(row.batch)!.partition,
          key: row.key,
        })),
      );
    }
  }
  return reconciled.sort((a, b) =>
    a.partition === b.partition ? compareText(a.key, b.key) : compareText(a.partition, b.partition),
  );
}

/**
 * A present version with its bytes: from the chunk store, else the unit's
 * content source (only bytes that hash to the digest); `chunk_missing` when
 * neither has them — a document is never put back to bytes the log lacks.
 */
async function withBytes(unit: ReconcileParts, version: LandedVersion): Promise<LandedVersion> {
  if (version.state === "absent" || version.bytes !== undefined) return version;
  const bytes = await unit.contentSource?.read(version.sha256);
  if (bytes !== undefined && sha256Hex(bytes) === version.sha256) return { ...version, bytes };
  throw reconcileFailed(unit.txnId, landedContentMissing(version));
}

function reconcileFailed(txnId: string, cause: unknown): RunledgerError {
  if (cause instanceof RunledgerError && cause.code === "reconcile_failed") return cause;
  const code = cause instanceof RunledgerError ? cause.code : undefined;
  return new RunledgerError(
    "reconcile_failed",
    `unit ${txnId} could not put the datastore's documents back to what the commit log holds ` +
      `(${cause instanceof Error ? cause.message : String(cause)}); its staged ops are kept: ` +
      "fix the cause and call commit() (or abandon()) again, which reconciles again",
    { cause, details: { txnId, ...(code === undefined ? {} : { causeCode: code }) } },
  );
}

/** A stable order for the report (UTF-16 code units). */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
