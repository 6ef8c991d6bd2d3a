/**
 * Operations: the promises a scope hands out for the work started on it,
 * which tell the scope whether its callback awaited that work.
 *
 * A callback that returns without awaiting work it started must be refused
 * the same way on every driver. Whether that work is still running when the
 * callback returns depends on the driver: a synchronous one (better-sqlite3)
 * has usually run its statements already, an asynchronous one (libSQL) has
 * not. So "still running" cannot be the rule on its own. What does not
 * depend on the driver is whether the callback looked at the result: `await`,
 * `then`, `catch`, `finally` and `Promise.all` all call the promise's `then`.
 * A native promise is awaited without its `then` being called; a subclass of
 * Promise is not, which is why an operation is one. When the callback's
 * promise settles, an operation still running, or finished but never
 * consumed, means the callback escaped (see scope.ts).
 *
 * An operation settles only once it is consumed. Until then its outcome is
 * held, so a failure nobody has looked at yet cannot become an unhandled
 * rejection while the callback still runs (it may await the operation later).
 * An operation the callback escaped is rejected with the scope's
 * `callback_escaped` error and marked handled through the base `then`
 * (which is not consumption): whoever awaits it later gets that error, and
 * if nobody ever does, nothing reaches the process's unhandledRejection.
 */

/** The base `then`: a handler attached through it does not count as consumption. */
const baseThen = Promise.prototype.then;
const ignore = (): undefined => undefined;

/** What `Operation.takeNow` answers for an operation whose value is not at hand. */
export const NOT_NOW: unique symbol = Symbol("not now");

/** The operations of one scope that are still running or not yet consumed. */
export type Outstanding = Set<{ abandon(error: unknown): void }>;

export class Operation<T> extends Promise<T> {
  /** Promises derived from an operation (`then`, `catch`) are plain promises. */
  static override get [Symbol.species](): PromiseConstructor {
    return Promise;
  }

  readonly #outstanding: Outstanding;
  readonly #resolve: (value: T) => void;
  readonly #reject: (reason: unknown) => void;
  #consumed = false;
  #finished = false;
  #fulfilled = false;
  #value: unknown;
  /** Resolved or rejected already: by its own outcome, or abandoned. */
  #handed = false;

  /**
   * `work`: the operation's own promise, or its value when it is done
   * already. The operation joins `outstanding` until it is consumed and finished.
   */
  constructor(work: T | Promise<T>, outstanding: Outstanding) {
    let resolve!: (value: T) => void;
    let reject!: (reason: unknown) => void;
    super((yes, no) => {
      resolve = yes;
      reject = no;
    });
    this.#resolve = resolve;
    this.#reject = reject;
    this.#outstanding = outstanding;
    outstanding.add(this);
    if (!(work instanceof Promise)) {
      this.#finish(true, work);
      return;
    }
    work.then(
      (value) => this.#finish(true, value),
      (error: unknown) => this.#finish(false, error),
    );
  }

  // biome-ignore lint/suspicious/noThenProperty: being awaited is what an operation records (see the header)
  override then<R1 = T, R2 = never>(
    onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    if (!this.#consumed) {
      this.#consumed = true;
      if (this.#finished) this.#hand();
    }
    return baseThen.call(this, onFulfilled, onRejected) as Promise<R1 | R2>;
  }

  /**
   * Its value, taken as an `await` takes it (it counts as consumed), when it
   * has finished fulfilled; else NOT_NOW and nothing changes (a running or
   * failed operation is awaited). The owner takes a step's apply this way:
   * a callback that returns the operation awaits it, and when the operation
   * is done already, no promise need be made to see its value.
   */
  takeNow(): T | typeof NOT_NOW {
    if (!this.#finished || !this.#fulfilled || this.#handed) return NOT_NOW;
    this.#consumed = true;
    this.#hand();
    return this.#value as T;
  }

  /**
   * The callback this operation was started in returned before awaiting it:
   * it rejects with `error` (the scope's own `callback_escaped`), marked
   * handled. What the work itself ends with later is ignored.
   */
  abandon(error: unknown): void {
    if (this.#handed) return;
    this.#handed = true;
    baseThen.call(this, undefined, ignore);
    this.#reject(error);
  }

  #finish(fulfilled: boolean, value: unknown): void {
    if (this.#handed) return;
    this.#finished = true;
    this.#fulfilled = fulfilled;
    this.#value = value;
    if (this.#consumed) this.#hand();
  }

  #hand(): void {
    this.#handed = true;
    this.#outstanding.delete(this);
    if (this.#fulfilled) this.#resolve(this.#value as T);
    else this.#reject(this.#value);
  }
}
