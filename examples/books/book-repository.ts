import { KError, newPage, offsetOf, type Page, type PageQuery, type Repository, type RequestContext } from 'flotilla';
import type { Book, NewBook } from './book.ts';

/** The list's filters: `author` (a case-insensitive substring of the author), `q` (of the title or the author). */
export interface BookFilter {
  author?: string;
  q?: string;
}

/**
 * The catalogue's storage, the seed's `Repository<Book, number>` plus what the
 * routes need: `SqlBookRepository` (`database/`) over SQLite or PostgreSQL,
 * and `InMemoryBookRepository` for tests and benchmarks without a database.
 */
export interface BookRepository extends Repository<Book, number> {
  findAll(ctx: RequestContext, q: PageQuery, filter?: BookFilter): Promise<Page<Book>>;
  findById(ctx: RequestContext, id: number): Promise<Book | undefined>;
  /** Adds a book; a taken ISBN is a 409 problem. */
  create(ctx: RequestContext, input: NewBook): Promise<Book>;
  /** The number of books. */
  count(signal?: AbortSignal): Promise<number>;
}

/** Whether `book` matches `filter` (the in-memory twin of the SQL `WHERE`). */
function matches(book: Book, author: string | undefined, q: string | undefined): boolean {
  if (author !== undefined && !book.author.toLowerCase().includes(author)) return false;
  return q === undefined || book.title.toLowerCase().includes(q) || book.author.toLowerCase().includes(q);
}

/** The books, kept in memory: no database, one copy per process. */
export class InMemoryBookRepository implements BookRepository {
  readonly #books: Book[];
  readonly #byId = new Map<number, Book>();
  readonly #isbns = new Set<string>();

  constructor(books: Book[]) {
    this.#books = [...books];
    for (const b of books) {
      this.#byId.set(b.id, b);
      this.#isbns.add(b.isbn);
    }
  }

  get size(): number {
    return this.#books.length;
  }

  async findAll(ctx: RequestContext, q: PageQuery, filter: BookFilter = {}): Promise<Page<Book>> {
    ctx.signal.throwIfAborted();
    const author = filter.author?.toLowerCase();
    const search = filter.q?.toLowerCase();
    const rows = author === undefined && search === undefined ? this.#books : this.#books.filter((b) => matches(b, author, search));
    const start = offsetOf(q);
    return newPage(rows.slice(start, start + q.limit), rows.length, q.page, q.limit);
  }

  async count(): Promise<number> {
    return this.#books.length;
  }

  async findById(_ctx: RequestContext, id: number): Promise<Book | undefined> {
    return this.#byId.get(id);
  }

  async create(_ctx: RequestContext, input: NewBook): Promise<Book> {
    if (this.#isbns.has(input.isbn))
      throw KError.conflict(`a book with ISBN ${input.isbn} already exists`, { details: { isbn: input.isbn } });
    const book: Book = { id: this.#books.length + 1, ...input };
    this.#books.push(book);
    this.#byId.set(book.id, book);
    this.#isbns.add(book.isbn);
    return book;
  }
}

/** A deterministic catalogue of `count` books (same data in every worker). */
export function sampleBooks(count: number): Book[] {
  const authors = [
    'Ursula K. Le Guin',
    'Italo Calvino',
    'Toni Morrison',
    'Jorge Luis Borges',
    'Octavia E. Butler',
    'Stanisław Lem',
    'Chinua Achebe',
    'Virginia Woolf',
  ];
  const words = ['River', 'Silent', 'Glass', 'Harbor', 'Winter', 'Atlas', 'Lantern', 'Orchard', 'Signal', 'Tide', 'Compass', 'Ember'];
  let seed = 42;
  // the generator's high bits: its low ones cycle with a short period (two authors out of eight)
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return Math.floor(seed / 2 ** 16);
  };
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    isbn: `978${String(1_000_000_000 + i).padStart(10, '0')}`,
    title: `The ${words[next() % words.length]} ${words[next() % words.length]}`,
    author: authors[next() % authors.length]!,
    year: 1900 + (next() % 125),
    pages: 80 + (next() % 900),
  }));
}
