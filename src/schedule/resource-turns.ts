/**
 * Turns on a resource, in this process: callers of one key go one after another, in the order
 * they asked (a FIFO lock per key, forgotten once nobody holds or waits for it).
 *
 * The pipeline takes a resource's turn for a call it decides and runs at once on an in-process
 * backend: such a backend may change the resource (the demo records what was read), which moves
 * its revision, and a call decided on the revision before that change would find its grant stale
 * (`res.rev`) at dispatch. Taking turns from the resource read to the backend's answer has each
 * such call decided on the revision it runs on. Other backends never change Writ's copy of a
 * resource, so their calls do not wait.
 */
export class ResourceTurns {
  readonly #tails = new Map<string, Promise<void>>();

  /** Waits for `key`'s turn; the caller calls the answer once its call ended. */
  async enter(key: string): Promise<() => void> {
    const previous = this.#tails.get(key);
    let release = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous === undefined ? done : previous.then(() => done);
    this.#tails.set(key, tail);
    if (previous !== undefined) await previous;
    return () => {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
  }
}
