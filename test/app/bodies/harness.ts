import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { App } from '../../../src/app/app.ts';
import { type BodyOptions, type BufferedMultipart, type MultipartPart, readBody } from '../../../src/app/bodies/index.ts';
import type { Ctx } from '../../../src/app/core/ctx.ts';
import type { KConfig } from '../../../src/config/types.ts';
import { controller, testApp } from '../../helpers/app.ts';

/** A route of the harness: `POST path`, its body read with `options`, then summed up by `consume` (default `summarize`). */
export interface BodyRoute {
  path: string;
  options: BodyOptions;
  consume?: (body: unknown, ctx: Ctx) => unknown;
}

/**
 * An App whose routes read their bodies with `readBody` in a middleware that
 * answers itself, as a route declaring `body: kind` will: the pipeline turns
 * the reader's errors into problems.
 */
export function bodyApp(routes: BodyRoute[], config: KConfig = {}): App {
  const { app } = testApp({ logging: { level: 'silent' }, ...config });
  app.registerController(
    controller(
      ...routes.map((r) => ({
        method: 'POST' as const,
        path: r.path,
        middlewares: [
          async (ctx: Ctx) => {
            const body = await readBody(ctx.req, r.options, ctx.context().signal);
            ctx.ok(await (r.consume ?? summarize)(body, ctx));
          },
        ],
        handler: () => {
          throw new Error('the body middleware answers');
        },
      })),
    ),
  );
  return app;
}

/** A body as JSON a test can compare: text and forms as they are, bytes in base64, parts and streams with their sizes and digests. */
export async function summarize(body: unknown): Promise<unknown> {
  if (body === undefined) return { none: true };
  if (Buffer.isBuffer(body)) return { base64: body.toString('base64'), length: body.length };
  if (typeof body === 'string') return { text: body };
  if (body instanceof Readable) return { stream: await digest(body) };
  if (isBuffered(body)) {
    return {
      fields: body.fields,
      files: body.files.map((f) => ({ name: f.name, filename: f.filename, mimeType: f.mimeType, text: f.data.toString('latin1') })),
    };
  }
  if (typeof body === 'object' && body !== null && Symbol.asyncIterator in body) {
    const parts: unknown[] = [];
    for await (const part of body as AsyncIterable<MultipartPart>) {
      if (part.kind === 'field') parts.push({ field: part.name, value: part.value });
      else parts.push({ file: part.name, filename: part.filename, mimeType: part.mimeType, ...(await digest(part.stream)) });
    }
    return { parts };
  }
  return { form: body };
}

function isBuffered(body: unknown): body is BufferedMultipart {
  return typeof body === 'object' && body !== null && 'files' in body && 'fields' in body && Array.isArray(body.files);
}

/** Reads a stream to its end into a counting, hashing sink: its size and SHA-256, never the bytes themselves. */
export async function digest(stream: Readable): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  await pipeline(
    stream,
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        hash.update(chunk);
        callback();
      },
    }),
  );
  return { size, sha256: hash.digest('hex') };
}

export const BOUNDARY = 'flotilla-test-boundary';

export type PartSpec = { name: string; value: string } | { name: string; filename: string; content: string | Buffer; type?: string };

/** A multipart/form-data body of `parts`, closed unless `close` is false. */
export function multipart(parts: PartSpec[], options: { boundary?: string; close?: boolean } = {}): Buffer {
  const boundary = options.boundary ?? BOUNDARY;
  const pieces: Buffer[] = [];
  for (const part of parts) {
    if ('filename' in part) {
      pieces.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\n` +
            `Content-Type: ${part.type ?? 'application/octet-stream'}\r\n\r\n`,
        ),
        Buffer.isBuffer(part.content) ? part.content : Buffer.from(part.content),
        Buffer.from('\r\n'),
      );
    } else {
      pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    }
  }
  if (options.close !== false) pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

export const MULTIPART_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
