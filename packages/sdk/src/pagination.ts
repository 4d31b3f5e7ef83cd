/** One page of a list (docs/api.md section 1): newest first; `has_more` says whether another follows. */
export interface ListPage<T> {
  readonly object: 'list';
  readonly data: T[];
  readonly has_more: boolean;
}

/**
 * What every `list` method returns. `await` it for one page; iterate it with `for await` for every
 * item of every page, fetched one page at a time as the loop needs them (`limit` sets the page
 * size). Nothing is requested until one of the two happens.
 *
 * ```ts
 * const page = await client.wallets.list({ user_id, limit: 10 }); // { object, data, has_more }
 * for await (const wallet of client.wallets.list({ user_id })) console.log(wallet.id);
 * ```
 */
export class PagedList<T> implements PromiseLike<ListPage<T>>, AsyncIterable<T> {
  readonly #fetchPage: (startingAfter: string | undefined) => Promise<ListPage<T>>;
  readonly #cursor: (item: T) => string;
  readonly #startingAfter: string | undefined;
  #firstPage: Promise<ListPage<T>> | undefined;

  /**
   * @param fetchPage requests the page after the item with that id (the first page for `undefined`)
   * @param cursor the id the next page starts after
   */
  constructor(
    fetchPage: (startingAfter: string | undefined) => Promise<ListPage<T>>,
    cursor: (item: T) => string,
    startingAfter: string | undefined,
  ) {
    this.#fetchPage = fetchPage;
    this.#cursor = cursor;
    this.#startingAfter = startingAfter;
  }

  /** A thenable on purpose: `await client.wallets.list()` is the single-page call. */
  then<Result1 = ListPage<T>, Result2 = never>(
    onFulfilled?: ((page: ListPage<T>) => Result1 | PromiseLike<Result1>) | null,
    onRejected?: ((reason: unknown) => Result2 | PromiseLike<Result2>) | null,
  ): Promise<Result1 | Result2> {
    this.#firstPage ??= this.#fetchPage(this.#startingAfter);
    return this.#firstPage.then(onFulfilled, onRejected);
  }

  /** Every page in turn, for when the page boundaries matter. */
  async *pages(): AsyncGenerator<ListPage<T>, void, undefined> {
    let startingAfter = this.#startingAfter;
    for (;;) {
      const page = await this.#fetchPage(startingAfter);
      yield page;
      const last = page.data.at(-1);
      if (!page.has_more || last === undefined) return;
      startingAfter = this.#cursor(last);
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item of every page, up to `limit` items (a bound, so that a mistake cannot load a whole project). */
  async toArray(options: { readonly limit: number }): Promise<T[]> {
    const items: T[] = [];
    if (options.limit <= 0) return items;
    for await (const item of this) {
      items.push(item);
      if (items.length >= options.limit) break;
    }
    return items;
  }
}
