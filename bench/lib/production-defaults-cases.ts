/**
 * The requests of the production-defaults benchmarks (`bench/production-defaults-cost.ts` over sockets,
 * `bench/production-defaults-inject.ts` in process): the list route plain, the same as a proxy forwards it
 * from the allowed origin, and a `POST /items` of a small JSON body with multi-byte UTF-8.
 */
import { ORIGIN } from '../services/data.ts';

export const LIST = '/items?page=3&limit=20';
/** The body of every `POST /items`: ~200 bytes of JSON, with 2-, 3- and 4-byte UTF-8 sequences. */
export const ITEM = {
  sku: 'CB-2048',
  name: 'Crème brûlée dish, größe M',
  category: 'kitchen',
  price: 18.5,
  stock: 12,
  notes: 'Glasiert · 日本製 · 🍮 ovenproof to 250 °C',
  tags: ['ceramic', 'naïve', 'café'],
};
export const BODY = JSON.stringify(ITEM);

export interface Case {
  name: string;
  title: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The status both sides must answer. */
  status: number;
}
export const CASES: Case[] = [
  {
    name: 'get',
    title: '`GET /items?page=3&limit=20`, plain',
    method: 'GET',
    path: LIST,
    headers: { Accept: 'application/json' },
    status: 200,
  },
  {
    name: 'get-proxied',
    title: 'the same through a proxy: `X-Forwarded-For`, `-Proto`, `-Host` and `Origin`',
    method: 'GET',
    path: LIST,
    headers: {
      Accept: 'application/json',
      'X-Forwarded-For': '203.0.113.7',
      'X-Forwarded-Proto': 'https',
      'X-Forwarded-Host': 'shop.example',
      Origin: ORIGIN,
    },
    status: 200,
  },
  {
    name: 'post',
    title: `\`POST /items\`, ${Buffer.byteLength(BODY)} bytes of JSON with multi-byte UTF-8`,
    method: 'POST',
    path: '/items',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json; charset=utf-8' },
    body: BODY,
    status: 201,
  },
];
