/** Counts requests being served and tells when none are left. */
export class InFlight {
  #count = 0;
  #waiters: (() => void)[] = [];

  get count(): number {
    return this.#count;
  }

  enter(): void {
    this.#count++;
  }

  leave(): void {
    this.#count--;
    if (this.#count === 0) for (const wake of this.#waiters.splice(0)) wake();
  }

  /** Resolves once no request is in flight. */
  idle(): Promise<void> {
    return this.#count === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }
}
