/**
 * Workspace fault family (docs/file-format.md "Applying a change"):
 * an apply that fails at any one of its statements — every one is tried in
 * turn, from BEGIN to COMMIT — leaves the previous root current, the journal
 * as it was and no orphan row in any table, and the same lease goes on to
 * apply the same change successfully. Inside a caller's transaction the
 * failed apply is undone alone and the caller's own writes commit. An apply
 * whose only write is its event (a step: small files in a small root) runs
 * with no savepoint, and holds to the same rules; so does a step that
 * writes rows beside its event (a message too large to be held, in a
 * directory too large to be held), which a synchronous driver runs now.
 */
import type { RunLease } from "@runledger/core";
import { CHUNK_SIZE } from "@runledger/core/engine";
import type {
  BeginMode,
  Driver,
  DriverConnection,
  DriverTransaction,
  SqlValue,
} from "@runledger/core/port";
import { describe, expect, it } from "vitest";
import { FaultInjector } from "../faults.js";
import type { Fixtures } from "../fixtures.js";
import {
  apply,
  applyToModel,
  codeOf,
  dumpTables,
  expectWorkspace,
  type Model,
  newRun,
  referenceRootId,
  referenceTextRootId,
  utf8,
} from "./workspace-fixtures.js";

/** Bytes that differ from chunk to chunk, from a seed. */
function noise(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

const BIG_OLD = noise(CHUNK_SIZE * 2 + 3, 11);
const BIG_NEW = noise(CHUNK_SIZE + 10, 12);
const STREAMED = noise(70_001, 13);

const BEFORE: Model = new Map(
  Object.entries({
    "keep/a.txt": utf8("a"),
    "keep/big.bin": BIG_OLD,
    "gone/one": utf8("1"),
    "gone/sub/two": utf8("2"),
    "replace.txt": utf8("old"),
    shared: utf8("shared content"),
  }),
);

/** The change under test: new chunked content, a stream, an overwrite, known content, deletes. */
function changes() {
  async function* streamed() {
    for (let offset = 0; offset < STREAMED.length; offset += 65_537) {
      yield STREAMED.slice(offset, offset + 65_537);
    }
  }
  return {
    put: {
      "new/deep/file.bin": BIG_NEW,
      "new/streamed": streamed(),
      "replace.txt": "new",
      "copy-of-shared": "shared content",
      "keep/b.txt": "b",
    },
    delete: ["gone/one", "gone/sub"],
  };
}

const AFTER: Model = applyToModel(
  BEFORE,
  {
    "new/deep/file.bin": BIG_NEW,
    "new/streamed": STREAMED,
    "replace.txt": utf8("new"),
    "copy-of-shared": utf8("shared content"),
    "keep/b.txt": utf8("b"),
  },
  ["gone/one", "gone/sub"],
);

/** Statement kinds a complete apply must have issued (each was failed in turn). */
const EXPECTED_KINDS = [
  /^SAVEPOINT /,
  /INSERT INTO workspace_chunk/,
  /INSERT INTO workspace_object/,
  /INSERT INTO journal/,
  /^RELEASE /,
];

const normalize = (sql: string) => sql.replace(/runledger_sp_\d+/g, "runledger_sp_N");

async function faultyRun(fx: Fixtures): Promise<{ faults: FaultInjector; lease: RunLease }> {
  const faults = new FaultInjector(fx.driver());
  const { lease } = await newRun(fx, { driver: faults.driver });
  await apply(lease, { put: Object.fromEntries(BEFORE) });
  await expectWorkspace(lease, BEFORE);
  return { faults, lease };
}

const current = (lease: RunLease) => lease.read((r) => r.workspace.currentRoot());

/** A workflow's step: one small file, in a root small enough for its event to hold. */
const step = (n: number) => ({ put: { "state/output.json": `{"step":${n}}` } });

/**
 * Between the caller's two events, `work` on the same transaction, with the
 * `nth` statement it sends failed when given (the caller's events then name
 * it as `k`): its code, the statements it sent, and whether the fault fired.
 */
async function betweenCallerEvents(
  lease: RunLease,
  faults: FaultInjector,
  work: (tx: Parameters<Parameters<RunLease["transact"]>[0]>[0]) => Promise<unknown>,
  nth?: number,
): Promise<{ code: string; statements: string[]; fired: number }> {
  let code = "";
  let statements: string[] = [];
  let fired = 0;
  const label: { k?: number } = nth === undefined ? {} : { k: nth };
  await lease.transact(async (tx) => {
    await tx.journal.append({ kind: "caller", ...label });
    const mark = faults.statements.length;
    if (nth !== undefined) faults.arm({ nth });
    code = await codeOf(work(tx));
    fired = faults.fired;
    faults.disarm();
    statements = faults.statements.slice(mark);
    await tx.journal.append({ kind: "caller-after", ...label });
  });
  return { code, statements, fired };
}

/** Guards the loops: an apply of this size issues far fewer statements. */
const MAX_STATEMENTS = 1_000;

/**
 * Runs `work` (a transaction of its own) again and again, its k-th statement
 * failed on the k-th run, until a run sends no k-th statement: every failed
 * run must leave the root and every table as they were. Answers the
 * statements of the run that succeeded.
 */
async function failEachStatement(
  lease: RunLease,
  faults: FaultInjector,
  work: () => Promise<unknown>,
): Promise<string[]> {
  const baseline = await dumpTables(lease);
  const previousRoot = await current(lease);
  for (let k = 1; k <= MAX_STATEMENTS; k++) {
    const mark = faults.statements.length;
    faults.arm({ nth: k });
    const code = await codeOf(work());
    const fired = faults.fired;
    faults.disarm();
    const statements = faults.statements.slice(mark);
    if (fired === 0) {
      expect(code).toBe("ok");
      // A failed run may leave the lease's guess on an event undone, so the next reads the
      // head first: a run may send one statement more than the one that succeeds.
      expect(k - 1, "every statement it sent was failed in turn").toBeGreaterThanOrEqual(
        statements.length,
      );
      return statements;
    }
    const context = `fault at statement ${k}: ${statements[k - 1]}`;
    expect(code, context).toBe("io_error");
    expect(await current(lease), context).toBe(previousRoot);
    expect(await dumpTables(lease), context).toStrictEqual(baseline);
  }
  throw new Error(`the work sent more than ${MAX_STATEMENTS} statements`);
}

/**
 * `failEachStatement` for work inside the caller's transaction, between its
 * two events: every failed run must leave the journal as it was plus the
 * caller's two events at the old root, and every other table as it was; the
 * run that succeeded lands the apply between them. Answers the statements of
 * that run.
 */
async function failEachStatementBetweenCallerEvents(
  lease: RunLease,
  faults: FaultInjector,
  work: (tx: Parameters<Parameters<RunLease["transact"]>[0]>[0]) => Promise<unknown>,
): Promise<string[]> {
  const baseline = await dumpTables(lease);
  const previousRoot = await current(lease);
  for (let k = 1; k <= MAX_STATEMENTS; k++) {
    const before = await lease.read((r) => r.journal.list());
    const { code, fired, statements } = await betweenCallerEvents(lease, faults, work, k);
    const events = await lease.read((r) => r.journal.list());
    if (fired === 0) {
      expect(code).toBe("ok");
      // A failed run may leave the lease's guess on an event undone, so the next reads the
      // head first: a run may send one statement more than the one that succeeds.
      expect(k - 1, "every statement it sent was failed in turn").toBeGreaterThanOrEqual(
        statements.length,
      );
      expect(events.slice(before.length).map((e) => e.record.kind)).toStrictEqual([
        "caller",
        "workspace.apply",
        "caller-after",
      ]);
      return statements;
    }
    const context = `fault at statement ${k}: ${statements[k - 1]}`;
    expect(code, context).toBe("io_error");
    // The journal holds what it held, plus exactly the caller's two events at the old root.
    expect(events.slice(0, before.length), context).toStrictEqual(before);
    expect(
      events.slice(before.length).map((e) => [e.record, e.rootId]),
      context,
    ).toStrictEqual([
      [{ kind: "caller", k }, previousRoot],
      [{ kind: "caller-after", k }, previousRoot],
    ]);
    const after = await dumpTables(lease);
    for (const table of Object.keys(baseline).filter((t) => t !== "journal")) {
      expect(after[table], `${context}: ${table}`).toStrictEqual(baseline[table]);
    }
  }
  throw new Error(`the work sent more than ${MAX_STATEMENTS} statements`);
}

export function describeWorkspaceFaults(fx: Fixtures): void {
  describeOneWriteApply(fx);
  describeRowsApply(fx);
  // Core's journal append tells a stale guess by SQLITE_CONSTRAINT_TRIGGER.
  const codes = fx.needs("extendedErrorCodes");
  describe("workspace: a fault at every statement of apply", () => {
    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    codes.it("in its own transaction: leaves the previous root, the journal and every table as they were", async () => {
      const { faults, lease } = await faultyRun(fx);
      const statements = await failEachStatement(lease, faults, () =>
        lease.transact((tx) => tx.workspace.apply(changes())),
      );
      expect(statements[0]).toMatch(/^BEGIN/);
      expect(statements[statements.length - 1]).toBe("COMMIT");
      for (const kind of EXPECTED_KINDS) {
        expect(
          statements.some((sql) => kind.test(sql)),
          String(kind),
        ).toBe(true);
      }
      expect(await current(lease)).toBe(referenceRootId(AFTER));
      await expectWorkspace(lease, AFTER);
      expect((await lease.verify()).problems).toStrictEqual([]);
    }, 120_000);

    it("inside the caller's transaction: undoes only the apply, and the caller's events commit", async () => {
      const { faults, lease } = await faultyRun(fx);
      const statements = await failEachStatementBetweenCallerEvents(lease, faults, (tx) =>
        tx.workspace.apply(changes()),
      );
      expect(statements[0]).toMatch(/^SAVEPOINT /);
      expect(statements[statements.length - 1]).toMatch(/^RELEASE /);
      for (const kind of EXPECTED_KINDS) {
        expect(
          statements.some((sql) => kind.test(sql)),
          String(kind),
        ).toBe(true);
      }
      await expectWorkspace(lease, AFTER);
      expect((await lease.verify()).problems).toStrictEqual([]);
    }, 120_000);

    it("issues the same statements in its own transaction as inside the caller's", async () => {
      const own = await faultyRun(fx);
      const mark = own.faults.statements.length;
      await own.lease.transact((tx) => tx.workspace.apply(changes()));
      const alone = own.faults.statements.slice(mark).map(normalize);

      const nested = await faultyRun(fx);
      let inside: string[] = [];
      await nested.lease.transact(async (tx) => {
        const start = nested.faults.statements.length;
        await tx.workspace.apply(changes());
        inside = nested.faults.statements.slice(start).map(normalize);
      });
      expect(alone.slice(1, -1)).toStrictEqual(inside);
    });
  });
}

/** A growing workflow's step: a new message too large to be held in its entry, so a row of its own. */
const message = (n: number) => ({
  put: {
    [`messages/${String(n).padStart(4, "0")}.json`]: `{"n":${n},"text":"${"m".repeat(300)}"}`,
  },
});

async function readMessage(lease: RunLease, n: number): Promise<string> {
  const path = Object.keys(message(n).put)[0]!;
  return new TextDecoder().decode(await lease.read((r) => r.workspace.read(path)));
}

function describeRowsApply(fx: Fixtures): void {
  const codes = fx.needs("extendedErrorCodes");
  const now = fx
    .needs("callsNow")
    .because("a driver whose calls settle later runs every step through promises");
  describe("workspace: a step that writes rows beside its event (a growing directory)", () => {
    /** A run whose `messages` directory is too large for its parent's entry to hold: a row of its own. */
    async function growingRun(driver: Driver) {
      const { lease } = await newRun(fx, { driver });
      const seeded: Record<string, string> = {};
      for (let n = 0; n < 40; n++) Object.assign(seeded, message(n).put);
      await apply(lease, { put: seeded });
      await apply(lease, message(40));
      return lease;
    }

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    now.it("is begun, written in a savepoint and committed now: its event, then its rows, with no promise of the driver's", async () => {
      const faults = new FaultInjector(fx.driver());
      const { driver, calls } = recordingCalls(faults.driver);
      const lease = await growingRun(driver);
      const mark = calls.length;
      const sent = faults.statements.length;
      await apply(lease, message(41));
      const made = calls.slice(mark);
      expect(["commit", "commitNow"]).toContain(made.at(-1));
      expect(made.slice(0, -1)).toStrictEqual(["beginNow", "executeNow", "executeNow", "executeNow", "executeNow"]);
      const statements = faults.statements.slice(sent).map(normalize);
      expect(statements.slice(1, -1).map((sql) => sql.split("\n")[0]!.slice(0, 32))).toStrictEqual([
        "SAVEPOINT runledger_sp_N",
        "INSERT INTO journal (sequence, e",
        "INSERT INTO workspace_object (id",
        "RELEASE runledger_sp_N",
      ]);
      expect(await readMessage(lease, 41)).toBe(message(41).put["messages/0041.json"]);
      expect((await lease.verify()).problems).toStrictEqual([]);
    });

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    codes.it("failing at any statement of its own transaction leaves the root, the journal and every table as they were", async () => {
      const faults = new FaultInjector(fx.driver());
      const lease = await growingRun(faults.driver);
      const statements = await failEachStatement(lease, faults, () => apply(lease, message(41)));
      expect(statements.some((sql) => /INSERT INTO workspace_object/.test(sql))).toBe(true);
      expect(await readMessage(lease, 41)).toBe(message(41).put["messages/0041.json"]);
      expect((await lease.verify()).problems).toStrictEqual([]);
    });

    it("failing at any statement inside the caller's transaction is undone alone, and the caller's events commit", async () => {
      const faults = new FaultInjector(fx.driver());
      const lease = await growingRun(faults.driver);
      const statements = await failEachStatementBetweenCallerEvents(lease, faults, (tx) =>
        tx.workspace.apply(message(41)),
      );
      expect(statements.some((sql) => /INSERT INTO workspace_object/.test(sql))).toBe(true);
      expect((await lease.verify()).problems).toStrictEqual([]);
    });
  });
}

/**
 * The driver, recording which of each pair of the port's calls a run made:
 * `begin` or `beginNow`, `execute` or `executeNow` (statements in a
 * transaction), `commit` or `commitNow`.
 */
function recordingCalls(driver: Driver): { driver: Driver; calls: string[] } {
  const calls: string[] = [];
  const transaction = (tx: DriverTransaction): DriverTransaction => ({
    get active() {
      return tx.active;
    },
    execute: (sql, params, options) => {
      calls.push("execute");
      return tx.execute(sql, params, options);
    },
    ...(tx.executeNow === undefined
      ? {}
      : {
          executeNow: (sql: string, params: readonly SqlValue[]) => {
            calls.push("executeNow");
            return tx.executeNow!(sql, params);
          },
        }),
    executeScript: (sql) => tx.executeScript(sql),
    commit: () => {
      calls.push("commit");
      return tx.commit();
    },
    ...(tx.commitNow === undefined
      ? {}
      : {
          commitNow: () => {
            calls.push("commitNow");
            tx.commitNow!();
          },
        }),
    rollback: () => tx.rollback(),
  });
  return {
    calls,
    driver: {
      name: `${driver.name}+calls`,
      ...(driver.hash === undefined ? {} : { hash: driver.hash }),
      ...(driver.asyncContext === undefined ? {} : { asyncContext: driver.asyncContext }),
      canonicalize: (location) => driver.canonicalize(location),
      async open(location, options): Promise<DriverConnection> {
        const connection = await driver.open(location, options);
        return {
          ...(connection.remote === undefined ? {} : { remote: connection.remote }),
          execute: (sql, params) => connection.execute(sql, params),
          executeScript: (sql) => connection.executeScript(sql),
          begin: async (mode) => {
            calls.push("begin");
            return transaction(await connection.begin(mode));
          },
          ...(connection.beginNow === undefined
            ? {}
            : {
                beginNow: (mode: BeginMode) => {
                  calls.push("beginNow");
                  return transaction(connection.beginNow!(mode));
                },
              }),
          configure: (settings) => connection.configure(settings),
          close: () => connection.close(),
        };
      },
    },
  };
}

function describeOneWriteApply(fx: Fixtures): void {
  const codes = fx.needs("extendedErrorCodes");
  const now = fx
    .needs("callsNow")
    .because("a driver whose calls settle later runs every step through promises");
  const local = fx
    .needs("local")
    .because(
      "a server's client learns late that a transaction ended, so on a server every apply keeps its savepoint",
    );
  describe("workspace: an apply whose only write is its event (a step)", () => {
    async function steppedRun() {
      const faults = new FaultInjector(fx.driver());
      const { lease } = await newRun(fx, { driver: faults.driver });
      await apply(lease, step(0));
      return { faults, lease };
    }

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    local.it("is sent as its event alone, with no SAVEPOINT or RELEASE", async () => {
      const { faults, lease } = await steppedRun();
      const mark = faults.statements.length;
      await apply(lease, step(1));
      const sent = faults.statements.slice(mark);
      expect(sent[0]).toMatch(/^BEGIN/);
      expect(sent.at(-1)).toBe("COMMIT");
      const writes = sent.slice(1, -1).filter((sql) => !/^\s*SELECT/i.test(sql));
      expect(writes).toHaveLength(1);
      expect(writes[0]).toMatch(/INSERT INTO journal/);
      expect(await current(lease)).toBe(
        referenceTextRootId({ "state/output.json": '{"step":1}' }),
      );
      expect((await lease.verify()).problems).toStrictEqual([]);
    });

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    now.it("is begun and its event written now, with no promise of the driver's, and committed now where the transaction offers it", async () => {
      const { driver, calls } = recordingCalls(fx.driver());
      const { lease } = await newRun(fx, { driver });
      await apply(lease, step(0));
      const mark = calls.length;
      await apply(lease, step(1));
      await lease.transact((tx) => tx.journal.append({ kind: "after-step" }));
      const made = calls.slice(mark);
      const commit = made.at(-1);
      expect(["commit", "commitNow"]).toContain(commit);
      expect(made).toStrictEqual(["beginNow", "executeNow", commit, "beginNow", "executeNow", commit]);
      const events = await lease.read((r) => r.journal.list());
      expect(events.map((e) => e.record.kind)).toStrictEqual(["workspace.apply", "workspace.apply", "after-step"]);
      expect(await current(lease)).toBe(
        referenceTextRootId({ "state/output.json": '{"step":1}' }),
      );
      expect((await lease.verify()).problems).toStrictEqual([]);
    });

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    now.it("is committed before transact returns where it commits now: another connection reads its event at once", async () => {
      const { driver, calls } = recordingCalls(fx.driver());
      const { lease, location } = await newRun(fx, { driver });
      await apply(lease, step(0));
      const reader = await fx.driver().open(location, {
        create: false,
        readOnly: true,
        busyTimeoutMs: 5_000,
        busyDeadlineMs: 5_000,
      });
      try {
        const events = async () => Number((await reader.execute("SELECT count(*) AS n FROM journal")).rows[0]!.n);
        const before = await events();
        const mark = calls.length;
        const applied = apply(lease, step(1));
        // Nothing has waited yet: every call of the step was made inside transact,
        // and the other connection's read is sent before anything settles.
        expect(calls.slice(mark)).toStrictEqual(["beginNow", "executeNow", "commitNow"]);
        const after = events();
        await applied;
        expect(await after).toBe(before + 1);
      } finally {
        await reader.close();
      }
      expect(await current(lease)).toBe(
        referenceTextRootId({ "state/output.json": '{"step":1}' }),
      );
    });

    it("failing at any statement inside the caller's transaction is undone alone, and the caller's events commit", async () => {
      const { faults, lease } = await steppedRun();
      await failEachStatementBetweenCallerEvents(lease, faults, (tx) =>
        tx.workspace.apply(step(1)),
      );
      expect((await lease.verify()).problems).toStrictEqual([]);
    });

    // biome-ignore format: gated registration; the body keeps its formatting for the merge
    codes.it("refused by SQLite itself (its key names an event already) inside the caller's transaction leaves no row of it", async () => {
      const { faults, lease } = await steppedRun();
      await lease.transact((tx) => tx.workspace.apply(step(1), { key: "step-1" }));
      const previousRoot = await current(lease);
      const baseline = await dumpTables(lease);
      const before = await lease.read((r) => r.journal.list());
      const { code, statements } = await betweenCallerEvents(lease, faults, (tx) =>
        tx.workspace.apply(step(2), { key: "step-1" }),
      );
      expect(code).toBe("idempotency_conflict");
      expect(statements.some((sql) => /INSERT INTO journal/.test(sql))).toBe(true);
      const events = (await lease.read((r) => r.journal.list())).slice(before.length);
      expect(events.map((e) => [e.record.kind, e.rootId])).toStrictEqual([
        ["caller", previousRoot],
        ["caller-after", previousRoot],
      ]);
      const after = await dumpTables(lease);
      for (const table of Object.keys(baseline).filter((t) => t !== "journal")) {
        expect(after[table], table).toStrictEqual(baseline[table]);
      }
      expect((await lease.verify()).problems).toStrictEqual([]);
    });
  });
}
