/** At most this long accepting what the kernel queued on a listener before closing it. */
const ACCEPT_QUEUED_MS = 500;

/** Resolves at the end of the event loop's next turn: between two of them lies one poll phase. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Turns the event loop until one of its poll phases accepts no connection
 * (`accepted` counts them), or for 500 ms: libuv accepts one connection per
 * listener per turn (level-triggered polling), so a listener whose process was
 * busy has a queue of connections their clients saw established, which closing
 * the listener would reset. Call it just before closing a listener of one's own.
 *
 * @example
 * await acceptQueued(() => accepted); server.close();
 */
export async function acceptQueued(accepted: () => number): Promise<void> {
  const until = performance.now() + ACCEPT_QUEUED_MS;
  await nextTurn();
  for (let before = -1; before !== accepted() && performance.now() < until; ) {
    before = accepted();
    await nextTurn();
  }
}
