import type { Controller, Route } from 'flotilla';

/** The topic on which each newly created book is published. */
export const NEW_BOOKS = 'books:created';

/**
 * `GET /books/live`: a WebSocket on which the client receives every book created from then on, as
 * JSON, whichever worker (or replica) created it: the create route publishes to the topic, and the
 * primary hands the message to every worker.
 *
 * @example
 * const socket = new WebSocket('ws://localhost:3000/api/books/live');
 * socket.onmessage = (event) => console.log('new book', JSON.parse(event.data));
 */
export class LiveFeedController implements Controller {
  routes(): Route[] {
    return [
      {
        method: 'GET',
        path: '/books/live',
        summary: 'New books, live',
        description: 'A WebSocket: each book created from now on arrives as a JSON message.',
        tags: ['books'],
        websocket: (socket, ctx) => {
          ctx.subscribe(NEW_BOOKS);
          // the feed is one-way: what the client sends is ignored
          socket.on('message', () => {});
        },
      },
    ];
  }
}
