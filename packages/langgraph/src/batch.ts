/**
 * Writes to one thread that arrive together land in one transaction.
 * LangGraph makes its checkpointer calls overlap (a `put` and a `putWrites`
 * are in flight at once); each was a transaction of its own, with its own
 * BEGIN and COMMIT. A write waits here until the event loop's next turn,
 * so the calls made in this one are gathered; the batch is one transaction
 * with each write in a savepoint of its own (a write that fails is undone
 * alone, and only its caller sees the failure), and every caller is
 * answered once the transaction has committed — as before, never earlier.
 * The transaction is optimistic: on a libSQL server it is sent in one
 * request, and if the server refuses it (another writer moved the thread)
 * it runs again the ordinary way. So its callback may run twice: it keeps
 * nothing outside the transaction but the outcomes, which it starts afresh.
 */
import type { RunLease, RunTransaction } from "@runledger/core";

interface Queued {
  readonly work: (tx: RunTransaction) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Outcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown };

/** The next turn of the event loop (setImmediate where the runtime has it). */
const nextTurn: (run: () => void) => void =
  typeof setImmediate === "function" ? (run) => setImmediate(run) : (run) => setTimeout(run, 0);

export class WriteBatch {
  readonly #lease: RunLease;
  #queue: Queued[] = [];

  constructor(lease: RunLease) {
    this.#lease = lease;
  }

  /** Runs `work` in the next transaction of this thread's run; its result once that has committed. */
  write<T>(work: (tx: RunTransaction) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#queue.length === 0) nextTurn(() => void this.#flush());
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#queue;
    this.#queue = [];
    let outcomes: Outcome[] = [];
    try {
      await this.#lease.transact(
        async (tx) => {
          outcomes = [];
          if (batch.length === 1) {
            outcomes.push({ ok: true, value: await batch[0]!.work(tx) });
            return;
          }
          for (const { work } of batch) {
            try {
              outcomes.push({ ok: true, value: await tx.savepoint((inner) => work(inner)) });
            } catch (error) {
              outcomes.push({ ok: false, error });
            }
          }
        },
        { optimistic: true },
      );
    } catch (error) {
      for (const queued of batch) queued.reject(error);
      return;
    }
    for (const [i, queued] of batch.entries()) {
      const outcome = outcomes[i]!;
      if (outcome.ok) queued.resolve(outcome.value);
      else queued.reject(outcome.error);
    }
  }
}
