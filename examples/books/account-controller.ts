import { timingSafeEqual } from 'node:crypto';
import { type Controller, defineRoute, KError, type Route } from 'flotilla';

declare module 'flotilla' {
  /** What the catalogue keeps in a session: who logged in. */
  interface SessionData {
    user: string;
  }
}

const CREDENTIALS = {
  type: 'object',
  required: ['name', 'password'],
  properties: { name: { type: 'string', minLength: 1, maxLength: 100 }, password: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

/**
 * Logging in and out of the catalogue's front page (public/index.html) with a session: `POST /login`
 * (a form; the one reader account, its password from `BOOKS_READER_PASSWORD`), `POST /logout`,
 * `GET /api/me`. A form posted from another site is refused before these run (`csrf`, on by default).
 */
export class AccountController implements Controller {
  readonly #password: Buffer;

  constructor(readerPassword: string) {
    this.#password = Buffer.from(readerPassword);
  }

  routes(): Route[] {
    return [
      defineRoute({
        method: 'POST',
        path: '/login',
        summary: 'Log in (a form): the session cookie, and back to the front page',
        description:
          'Checks the reader account; on success a new session (a new id: no session fixation) holds the user, and its signed cookie comes with the redirect. A wrong password redirects to `/?login=failed`, with no session.',
        tags: ['account'],
        body: 'form',
        schema: { body: CREDENTIALS, response: { 303: { type: 'null', description: 'Back to the front page' } } },
        handler: async (ctx) => {
          const { name, password } = ctx.body;
          const given = Buffer.from(password);
          const valid = name === 'reader' && given.length === this.#password.length && timingSafeEqual(given, this.#password);
          ctx.status(303).setHeader('Location', valid ? '/' : '/?login=failed');
          if (!valid) return;
          const session = await ctx.session();
          // a new id at login: an id planted before it (session fixation) is worth nothing after
          session.regenerate();
          session.set('user', name);
        },
      }),
      defineRoute({
        method: 'POST',
        path: '/logout',
        summary: 'Log out: the session ends, and back to the front page',
        description: 'Destroys the session in the store and clears its cookie.',
        tags: ['account'],
        schema: { response: { 303: { type: 'null', description: 'Back to the front page' } } },
        handler: async (ctx) => {
          (await ctx.session()).destroy();
          ctx.status(303).setHeader('Location', '/');
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/api/me',
        summary: 'Who is logged in',
        description: "The session's user, as the front page shows it; 401 without a session that holds one.",
        tags: ['account'],
        schema: {
          response: {
            200: { type: 'object', required: ['user'], properties: { user: { type: 'string' } }, additionalProperties: false },
            401: {
              description: 'Nobody is logged in',
              content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
            },
          },
        },
        handler: async (ctx) => {
          const user = (await ctx.session()).get('user');
          if (user === undefined) throw KError.unauthorized('nobody is logged in');
          return { user };
        },
      }),
    ];
  }
}
