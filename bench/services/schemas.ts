/**
 * The response schemas of the items routes, for the contenders that declare
 * them: flotilla's `paginated()` builds `PAGE_SCHEMA` from `ITEM_SCHEMA` itself
 * (items.ts checks that it is this very schema), Fastify is given it as is.
 * Nothing here imports flotilla, so the other contenders do not load it.
 */

type JsonSchema = Record<string, unknown>;

/** One item: six fields, all required, nothing else declared. */
export const ITEM_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['id', 'sku', 'name', 'category', 'price', 'stock'],
  properties: {
    id: { type: 'integer' },
    sku: { type: 'string' },
    name: { type: 'string' },
    category: { type: 'string' },
    price: { type: 'number' },
    stock: { type: 'integer' },
  },
};

/** The `Page<T>` envelope of items, as flotilla's `pageSchema(ITEM_SCHEMA)` writes it. */
export const PAGE_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['data', 'total', 'page', 'limit', 'total_pages'],
  properties: {
    data: { type: 'array', items: ITEM_SCHEMA },
    total: { type: 'integer', minimum: 0, description: 'Total number of items' },
    page: { type: 'integer', minimum: 1, description: 'Current page number (1-based)' },
    limit: { type: 'integer', minimum: 1, maximum: 100, description: 'Page size' },
    total_pages: { type: 'integer', minimum: 0, description: 'ceil(total / limit)' },
  },
};
