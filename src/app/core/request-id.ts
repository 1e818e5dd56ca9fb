import { randomUUID } from 'node:crypto';

const SANE = /^[\x21-\x7e]{1,128}$/;

/** Keeps a sane incoming `X-Request-Id` (visible ASCII, at most 128 characters), else makes a new one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && SANE.test(header) ? header : randomUUID();
}
