/** A bundle that cannot be written or read. The message says what is wrong and what to do. */
export class BundleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BundleError";
  }
}
