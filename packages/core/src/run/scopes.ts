/**
 * What a run lease hands its callbacks: the transaction and snapshot views
 * that put the journal, the run row and the workspace side by side, and the
 * journal the workspace publishes roots through.
 */
import { type LiveSchema, readLiveSchema } from "../schema/recognize.js";
import type { ReadScope, WriteScope } from "../transaction/scope.js";
import type { WorkspaceContext } from "../workspace/context.js";
import { WorkspaceReader } from "../workspace/reader.js";
import type { RootJournal } from "../workspace/root-journal.js";
import { WorkspaceWriter } from "../workspace/writer.js";
import { countRun, type RunCounts } from "./counts.js";
import { JournalWriter, journalText, noHint, type RootHint } from "./journal.js";
import { checkKey, JournalReader } from "./journal-reader.js";
import { readHead } from "./journal-roots.js";
import { pruneJournal } from "./prune.js";
import { RunRecordReader, RunRecordWriter } from "./run-row.js";
import type { RunContext } from "./types.js";

/** What a transaction did that its lease acts on after the commit (the catalog's note). */
export interface RunMarks {
  statusChanged: boolean;
}

/**
 * What `lease.transact(fn)` hands to `fn`: the run's journal and run row
 * and its workspace, all writing in this one
 * transaction. `savepoint` nests with the same shape.
 */
export class RunTransaction {
  readonly workspace: WorkspaceWriter;
  readonly #scope: WriteScope;
  readonly #context: RunContext;
  readonly #hint: RootHint;
  readonly #marks: RunMarks;
  // Made on first use: most steps touch only the workspace, and a transaction is made for each.
  #journal: JournalWriter | undefined;
  #run: RunRecordWriter | undefined;

  /**
   * @internal A run lease makes its transactions. `hint`: the last event the
   * lease saw appended, shared by its transactions (see RootHint).
   */
  constructor(
    scope: WriteScope,
    context: RunContext,
    hint: RootHint = noHint(),
    marks: RunMarks = { statusChanged: false },
  ) {
    scope.tracksOperations();
    this.#scope = scope;
    this.#context = context;
    this.#hint = hint;
    this.#marks = marks;
    this.workspace = new WorkspaceWriter(
      scope,
      context,
      context.workspace,
      rootJournal(context, hint),
    );
  }

  /** The run's journal, appending in this transaction. */
  get journal(): JournalWriter {
    this.#journal ??= new JournalWriter(this.#scope, this.#context, this.#hint);
    return this.#journal;
  }

  /** The run row (status, definition), written in this transaction. */
  get run(): RunRecordWriter {
    const context = this.#context;
    const hint = this.#hint;
    this.#run ??= new RunRecordWriter(
      this.#scope,
      context,
      (at) => new JournalWriter(at, context, hint),
      this.#marks,
    );
    return this.#run;
  }

  /** Runs `fn` in a savepoint: its writes are undone if it throws, and the transaction continues. */
  savepoint<T>(fn: (tx: RunTransaction) => Promise<T>): Promise<T> {
    return this.#scope.track(
      this.#scope.savepoint((scope) =>
        fn(new RunTransaction(scope, this.#context, this.#hint, this.#marks)),
      ),
    );
  }
}

/**
 * What `lease.read(fn)` hands to `fn`: a consistent snapshot of the run —
 * its journal, run row and workspace, and the file itself (`schema`, `counts`).
 */
export class RunSnapshot {
  readonly journal: JournalReader;
  readonly run: RunRecordReader;
  readonly workspace: WorkspaceReader;
  readonly #scope: ReadScope;

  constructor(scope: ReadScope, workspace: WorkspaceContext) {
    scope.tracksOperations();
    this.#scope = scope;
    this.journal = new JournalReader(scope);
    this.run = new RunRecordReader(scope);
    this.workspace = new WorkspaceReader(scope, workspace);
  }

  /** The header (application_id, user_version, journal mode) and every schema object, as the file stores them. */
  schema(): Promise<LiveSchema> {
    return this.#scope.track(readLiveSchema(this.#scope));
  }

  /** How many events (and which range), objects, chunks, roots and pins the run holds. Scans: O(rows). */
  counts(): Promise<RunCounts> {
    return this.#scope.track(countRun(this.#scope));
  }
}

/** The run's journal as its workspace publishes roots through it, and prunes it (RootJournal). */
function rootJournal(context: RunContext, hint: RootHint): RootJournal {
  return {
    text: journalText,
    checkKey: (key) => checkKey(key, "apply's key"),
    at(scope) {
      const journal = new JournalWriter(scope, context, hint);
      return {
        guess: () => journal.guess(),
        head: () => readHead(scope),
        publish: (text, base, root, rootBytes, key) =>
          journal.publish(text, base, root, rootBytes, key),
      };
    },
    prune: pruneJournal,
  };
}
