/**
 * A cooperative FIFO queue: the operations given to it run one at a time, in
 * the order they arrived, and a failed one does not stop those behind it.
 * A connection entry runs its turns through one (one statement stream per
 * file), and so does a commit unit (one staging operation at a time).
 *
 * An operation given to an idle queue starts at once, inside `run`; one given
 * to a busy queue waits until every operation before it has settled. The
 * queue is busy from the moment an operation starts, so one queued from
 * inside a running operation, even synchronously, waits for it. An operation
 * may answer `Done` instead of a promise: it finished before returning (a
 * step on a synchronous driver), and the queue is free again at once.
 */
export class TurnQueue {
  /** The operations waiting for their turn, oldest first: each starts its own when called. */
  readonly #waiting: (() => void)[] = [];
  #running = false;

  /** Operations queued or running. */
  get size(): number {
    return this.#waiting.length + (this.#running ? 1 : 0);
  }

  run<T>(operation: () => Promise<T> | Done<T>): Promise<T> {
    if (this.#running) {
      return new Promise<T>((resolve, reject) => {
        this.#waiting.push(() => promised(this.#start(operation)).then(resolve, reject));
      });
    }
    this.#running = true;
    return promised(this.#start(operation));
  }

  /** Resolves once everything queued so far has finished. */
  drained(): Promise<void> {
    return this.run(() => DONE);
  }

  /** Runs `operation` now; the next one starts once it has settled. */
  #start<T>(operation: () => Promise<T> | Done<T>): Promise<T> | Done<T> {
    let turn: Promise<T> | Done<T>;
    try {
      turn = operation();
    } catch (error) {
      turn = Promise.reject(error);
    }
    if (!(turn instanceof Done)) {
      turn.then(this.#next, this.#next);
    } else if (this.#waiting.length === 0) {
      this.#running = false;
    } else {
      // Not now: a queue of operations that each finish at once would nest one call per operation.
      void Promise.resolve().then(this.#next);
    }
    return turn;
  }

  /** A turn settled: the oldest waiting operation starts, or the queue is idle. */
  readonly #next = (): void => {
    const waiting = this.#waiting.shift();
    if (waiting === undefined) this.#running = false;
    else waiting();
  };
}

/**
 * What an operation answers when it finished before returning: its value,
 * with no promise made for it (see TurnQueue).
 */
export class Done<T> {
  readonly value: T;

  constructor(value: T) {
    this.value = value;
  }
}

const DONE = new Done<void>(undefined);

/** An operation's answer as a promise. */
export function promised<T>(answer: Promise<T> | Done<T>): Promise<T> {
  return answer instanceof Done ? Promise.resolve(answer.value) : answer;
}
