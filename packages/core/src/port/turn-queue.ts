/**
 * A cooperative FIFO queue: the operations given to it run one at a time, in
 * the order they arrived, and a failed one does not stop those behind it.
 * A connection entry runs its turns through one (one statement stream per
 * file), and so does a commit unit (one staging operation at a time).
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
