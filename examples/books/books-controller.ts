import { type Controller, defineRoute, KError, type Middleware, paginated, type Route } from 'flotilla';
import { BOOK_SCHEMA, type Book, NEW_BOOK_SCHEMA } from './book.ts';
import type { BookFilter, BookRepository } from './book-repository.ts';

const ID_PARAMS = { type: 'object', required: ['id'], properties: { id: { type: 'integer', minimum: 1 } } } as const;

/**
 * `GET /books` (paginated), `GET /books/:id`, `POST /books` (needs the API key; the new book is
 * passed to `created`, which publishes it to the live feed).
 */
export class BooksController implements Controller {
  readonly #repo: BookRepository;
  readonly #requireApiKey: Middleware;
  readonly #created: (book: Book) => void;

  constructor(repo: BookRepository, requireApiKey: Middleware, created: (book: Book) => void = () => {}) {
    this.#repo = repo;
    this.#requireApiKey = requireApiKey;
    this.#created = created;
  }

  routes(): Route[] {
    return [
      paginated(
        {
          method: 'GET',
          path: '/books',
          summary: 'List books',
          description:
            'Pages through the catalogue, by id; `q` keeps the books whose title or author contains it, `author` those whose author does (case-insensitive).',
          tags: ['books'],
          schema: {
            querystring: {
              type: 'object',
              properties: { q: { type: 'string', minLength: 1, maxLength: 100 }, author: { type: 'string', maxLength: 100 } },
            },
          },
          handler: (ctx) => {
            const { q, author } = ctx.query; // string | undefined
            const filter: BookFilter = {};
            if (q !== undefined) filter.q = q;
            if (author !== undefined) filter.author = author;
            return this.#repo.findAll(ctx.context(), ctx.parsePagination(), filter);
          },
        },
        BOOK_SCHEMA,
      ),
      defineRoute({
        method: 'GET',
        path: '/books/:id',
        summary: 'Get a book',
        description: 'One book of the catalogue by its id; 404 when there is none.',
        tags: ['books'],
        schema: { params: ID_PARAMS, response: { 200: BOOK_SCHEMA } },
        problems: [{ status: 404, code: 'NOT_FOUND', description: 'no book has this id' }],
        handler: async (ctx) => {
          const { id } = ctx.params; // a number: the schema coerces it
          const book = await this.#repo.findById(ctx.context(), id);
          if (book === undefined) throw KError.notFound(`book ${id} does not exist`);
          return book; // checked against BOOK_SCHEMA
        },
      }),
      defineRoute({
        method: 'POST',
        path: '/books',
        summary: 'Add a book',
        description: 'Requires the `X-Api-Key` header.',
        tags: ['books'],
        // documents what the middleware checks: the key of docs.securitySchemes.apiKey (config/app.yaml)
        security: [{ apiKey: [] }],
        middlewares: [this.#requireApiKey],
        schema: { body: NEW_BOOK_SCHEMA, response: { 201: BOOK_SCHEMA } },
        // what the handler throws (database/database-errors.ts): the 401 of the key, 400, 413, 415… are flotilla's own
        problems: [{ status: 409, code: 'CONFLICT', description: 'a book with this ISBN exists' }],
        handler: async (ctx) => {
          const book = await this.#repo.create(ctx.context(), ctx.body); // the body is a NewBook
          this.#created(book);
          ctx.setHeader('Location', `${ctx.path}/${book.id}`).created(book);
        },
      }),
    ];
  }
}
