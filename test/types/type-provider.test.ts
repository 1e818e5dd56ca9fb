import { type TestContext, test } from 'node:test';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { expectTypeOf } from 'expect-type';
import { newPage, type SchemaType, type TypeProvider, withTypeProvider } from '../../src/index.ts';
import { controller, testApp } from '../helpers/app.ts';

/*
 * The type-provider slot: TypeBox schemas type the routes as JSON Schema
 * objects do (what docs/guides/typed-routes.md, "Other schema libraries", shows). The
 * typecheck is the test; the node:test part runs the routes.
 */

interface TypeBoxProvider extends TypeProvider {
  output: this['schema'] extends TSchema ? Static<this['schema']> : unknown;
}

const { defineRoute, paginated } = withTypeProvider<TypeBoxProvider>();

const Author = Type.Object({ id: Type.Integer(), name: Type.String() }, { additionalProperties: false });
type Author = SchemaType<typeof Author, TypeBoxProvider>;
expectTypeOf<Author>().toEqualTypeOf<{ id: number; name: string }>();

const authors: Author[] = [{ id: 1, name: 'Italo Calvino' }];

const getAuthor = defineRoute({
  method: 'GET',
  path: '/authors/:id',
  schema: {
    params: Type.Object({ id: Type.Integer() }),
    querystring: Type.Object({ fields: Type.Optional(Type.String()) }),
    response: { 200: Author },
  },
  handler: (ctx) => {
    expectTypeOf(ctx.params).toEqualTypeOf<{ id: number }>();
    expectTypeOf(ctx.query).toEqualTypeOf<{ fields?: string }>();
    // @ts-expect-error the id is an integer
    const id: string = ctx.params.id;
    // @ts-expect-error an undeclared query parameter
    void ctx.query.page;
    void id;
    return { id: ctx.params.id, name: `author ${ctx.params.id}` };
  },
});

defineRoute({
  method: 'POST',
  path: '/authors',
  schema: { body: Type.Object({ name: Type.String() }), response: { 201: Author } },
  // @ts-expect-error `id` is required by the 201 schema
  handler: (ctx) => ({ name: ctx.body.name }),
});

const listAuthors = paginated(
  {
    method: 'GET',
    path: '/authors',
    handler: (ctx) => {
      const q = ctx.parsePagination();
      return newPage(authors, authors.length, q.page, q.limit);
    },
  },
  Author,
);

paginated(
  {
    method: 'GET',
    path: '/authors',
    // @ts-expect-error the items are not Authors
    handler: () => newPage([{ id: 'one' }], 1, 1, 20),
  },
  Author,
);

// a JSON Schema object is not TypeBox's: this provider leaves it untyped
defineRoute({
  method: 'GET',
  path: '/plain/:id',
  schema: { params: { type: 'object', properties: { id: { type: 'integer' } } } },
  handler: (ctx) => {
    expectTypeOf(ctx.params).toEqualTypeOf<{ id: string }>();
  },
});

test('TypeBox schemas validate and document as JSON Schema', async (t: TestContext) => {
  const { app } = testApp();
  app.registerController(controller(getAuthor, listAuthors));
  t.after(() => app.close());
  t.assert.deepStrictEqual((await app.inject('/authors/7')).json(), { id: 7, name: 'author 7' });
  t.assert.strictEqual((await app.inject('/authors/seven')).statusCode, 400);
  t.assert.deepStrictEqual((await app.inject('/authors')).json(), newPage(authors, 1, 1, 20));
  t.assert.ok('/authors/{id}' in app.openapi().paths);
});
