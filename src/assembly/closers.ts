/** What a gateway closes when it stops, in the reverse order of starting. */
export type Closers = Array<() => Promise<void> | void>;

/** Runs `closers` last-started first (the list is emptied: each runs once). */
export async function closeAll(closers: Closers): Promise<void> {
  for (const close of closers.splice(0).reverse()) await close();
}
