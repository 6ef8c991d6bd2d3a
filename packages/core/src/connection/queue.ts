/**
 * A cooperative FIFO queue: operations on one entry run one at a time, in the
 * order they arrived. A failed operation does not stop the ones behind it.
 */
export class TurnQueue {
  #tail: Promise<unknown> = Promise.resolve();
  #waiting = 0;

  /** Operations queued or running. */
  get size(): number {
    return this.#waiting;
  }

  run<T>(operation: () => Promise<T>): Promise<T> {
    this.#waiting++;
    const turn = this.#tail.then(operation);
    this.#tail = turn.then(
      () => this.#waiting--,
      () => this.#waiting--,
    );
    return turn;
  }

  /** Resolves once everything queued so far has finished. */
  drained(): Promise<void> {
    return this.#tail.then(() => undefined);
  }
}
