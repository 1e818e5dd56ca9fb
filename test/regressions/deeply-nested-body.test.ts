import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_BODY_DEPTH } from '../../src/app/bodies/index.ts';
import { controller, testApp } from '../helpers/app.ts';

/**
 * What broke: a JSON body of 10 000 nested arrays (20 kB) was accepted, and a
 * handler answering with it — or anything else recursing over it — hit
 * "Maximum call stack size exceeded": a 500 for bad input. Bodies nested
 * deeper than MAX_BODY_DEPTH are now a 400 before they are parsed.
 */

const HEADERS = { 'content-type': 'application/json' };

test('a body nested deeper than MAX_BODY_DEPTH is a 400; one at the limit is accepted', async () => {
  const { app } = testApp();
  app.registerController(controller({ method: 'POST', path: '/echo', handler: (ctx) => ({ body: ctx.body }) }));
  const arrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const objects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  for (const nest of [arrays, objects]) {
    for (const depth of [MAX_BODY_DEPTH + 1, 10_000, 100_000]) {
      const res = await app.inject({ method: 'POST', url: '/echo', headers: HEADERS, payload: nest(depth) });
      assert.equal(res.statusCode, 400, `depth ${depth}`);
      assert.equal(res.json().code, 'BAD_REQUEST');
      assert.equal(res.json().detail, `the body is nested more than ${MAX_BODY_DEPTH} levels deep`);
    }
    const deepest = await app.inject({ method: 'POST', url: '/echo', headers: HEADERS, payload: nest(MAX_BODY_DEPTH) });
    assert.equal(deepest.statusCode, 200);
    assert.deepEqual(deepest.json().body, JSON.parse(nest(MAX_BODY_DEPTH)));
  }
});

test('brackets inside strings, escaped quotes included, do not count as nesting', async () => {
  const { app } = testApp();
  app.registerController(controller({ method: 'POST', path: '/echo', handler: (ctx) => ({ body: ctx.body }) }));
  const text = `["\\"${'['.repeat(2000)}", {"k\\\\": "${'{'.repeat(2000)}"}]`;
  const res = await app.inject({ method: 'POST', url: '/echo', headers: HEADERS, payload: text });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json().body, JSON.parse(text));
});
