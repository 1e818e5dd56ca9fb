import type { JsonSchema, SchemaType } from 'flotilla';

const newBookProperties = {
  isbn: { type: 'string', pattern: '^97[89][0-9]{10}$', description: 'ISBN-13, digits only', examples: ['9780262033848'] },
  title: { type: 'string', minLength: 1, maxLength: 300 },
  author: { type: 'string', minLength: 1, maxLength: 200 },
  year: { type: 'integer', minimum: 1450, maximum: 2100 },
  pages: { type: 'integer', minimum: 1, maximum: 100_000 },
} as const;

/** A book as the API returns it. */
export const BOOK_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'isbn', 'title', 'author', 'year', 'pages'],
  properties: { id: { type: 'integer', minimum: 1 }, ...newBookProperties },
} as const satisfies JsonSchema;

/** The body of `POST /api/books`. */
export const NEW_BOOK_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['isbn', 'title', 'author', 'year', 'pages'],
  properties: newBookProperties,
} as const satisfies JsonSchema;

/** `{ id, isbn, title, author, year, pages }`, typed from `BOOK_SCHEMA`. */
export type Book = SchemaType<typeof BOOK_SCHEMA>;

/** A book without its id, as `POST /api/books` takes it. */
export type NewBook = SchemaType<typeof NEW_BOOK_SCHEMA>;
