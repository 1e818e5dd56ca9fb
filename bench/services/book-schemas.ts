/**
 * The route of `bench/schema-cost.ts`, `POST /books`, its schemas written five ways (JSON Schema,
 * Zod 4, Valibot 1, ArkType 2, TypeBox 1), the body every request sends and the bodies each way must
 * refuse. The handler answers 201 with the book, an id and one key no schema declares, which the
 * response schema must drop. Nothing here imports flotilla, so the Fastify contender does not load it.
 */
import { type } from 'arktype';
import Type from 'typebox';
import * as v from 'valibot';
import { z } from 'zod';

export const FORMATS = ['hardcover', 'paperback', 'ebook'] as const;

/** What every load request sends: five fields (one optional), a nested array of 3. */
export const BOOK = {
  title: 'The Left Hand of Darkness',
  subtitle: 'A Hainish novel',
  year: 1969,
  format: 'paperback',
  chapters: [
    { title: 'A Parade in Erhenrang', pages: 14 },
    { title: 'The Place Inside the Blizzard', pages: 9 },
    { title: 'The Mad King', pages: 12 },
  ],
};

/** The handler's reply to `body`: the book, an id, and a key that no response schema declares. */
export function bookReply<T extends object>(body: T): { id: number } & T & { internal: string } {
  return { id: 7, ...body, internal: 'dropped by the response schema' };
}

/** Bodies every variant must answer 400 (the one constraint each breaks). */
export const INVALID: Record<string, unknown> = {
  'title too short': { ...BOOK, title: '' },
  'year not an integer': { ...BOOK, year: 1969.5 },
  'format not in the enum': { ...BOOK, format: 'scroll' },
  'nested pages not an integer': { ...BOOK, chapters: [BOOK.chapters[0], { title: 'Two', pages: 'ten' }, BOOK.chapters[2]] },
  'title missing': { year: 1969, format: 'ebook', chapters: BOOK.chapters },
};

const chapter = {
  type: 'object',
  required: ['title', 'pages'],
  properties: { title: { type: 'string', minLength: 1 }, pages: { type: 'integer', minimum: 1 } },
};
const book = {
  title: { type: 'string', minLength: 1, maxLength: 200 },
  subtitle: { type: 'string' },
  year: { type: 'integer', minimum: 0 },
  format: { enum: [...FORMATS] },
  chapters: { type: 'array', minItems: 1, maxItems: 100, items: chapter },
};
const required = ['title', 'year', 'format', 'chapters'];

const zodBook = {
  title: z.string().min(1).max(200),
  subtitle: z.string().optional(),
  year: z.int().min(0),
  format: z.enum(FORMATS),
  chapters: z
    .array(z.object({ title: z.string().min(1), pages: z.int().min(1) }))
    .min(1)
    .max(100),
};
const valibotBook = {
  title: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  subtitle: v.optional(v.string()),
  year: v.pipe(v.number(), v.integer(), v.minValue(0)),
  format: v.picklist(FORMATS),
  chapters: v.pipe(
    v.array(v.object({ title: v.pipe(v.string(), v.minLength(1)), pages: v.pipe(v.number(), v.integer(), v.minValue(1)) })),
    v.minLength(1),
    v.maxLength(100),
  ),
};
const arkBook = {
  title: '0 < string <= 200',
  'subtitle?': 'string',
  year: 'number.integer >= 0',
  format: "'hardcover' | 'paperback' | 'ebook'",
  chapters: type({ title: 'string > 0', pages: 'number.integer >= 1' }).array().atLeastLength(1).atMostLength(100),
} as const;
const typeboxBook = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  subtitle: Type.Optional(Type.String()),
  year: Type.Integer({ minimum: 0 }),
  format: Type.Enum([...FORMATS]),
  chapters: Type.Array(Type.Object({ title: Type.String({ minLength: 1 }), pages: Type.Integer({ minimum: 1 }) }), {
    minItems: 1,
    maxItems: 100,
  }),
};

/** The body and 201 schemas of the route, each way. */
export const SCHEMAS = {
  json: {
    body: { type: 'object', required, properties: book },
    response: { type: 'object', required: ['id', ...required], properties: { id: { type: 'integer' }, ...book } },
  },
  zod: { body: z.object(zodBook), response: z.object({ id: z.int(), ...zodBook }) },
  valibot: { body: v.object(valibotBook), response: v.object({ id: v.pipe(v.number(), v.integer()), ...valibotBook }) },
  arktype: { body: type(arkBook), response: type({ id: 'number.integer', ...arkBook }) },
  typebox: { body: Type.Object(typeboxBook), response: Type.Object({ id: Type.Integer(), ...typeboxBook }) },
};

export type SchemaWay = keyof typeof SCHEMAS;
