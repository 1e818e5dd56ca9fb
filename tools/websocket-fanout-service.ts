import { defineService } from '../src/index.ts';

/**
 * The WebSocket fan-out service of the fan-out bench (`bench/websocket-fanout.ts`) and of the
 * slow-reader measurement (`reliability/websockets.ts`): `GET /sub` subscribes its socket to
 * `bench`; on `GET /pub` a text message is published to `bench` as it is.
 */
export default defineService((app) => {
  app.registerController({
    routes: () => [
      { method: 'GET', path: '/sub', websocket: (_socket, ctx) => ctx.subscribe('bench') },
      {
        method: 'GET',
        path: '/pub',
        websocket: (socket) => {
          socket.on('message', (data) => app.publish('bench', String(data)));
        },
      },
    ],
  });
});
