import { type TestContext, test } from 'node:test';
import { MINIMUM_NODE, unsupportedNode } from '../../src/cli/node-version.ts';

test('a Node.js older than the minimum is refused in one line naming both versions', (t: TestContext) => {
  t.assert.strictEqual(
    unsupportedNode('20.20.2'),
    `flotilla needs Node.js ${MINIMUM_NODE} or later (24 LTS recommended); this is Node.js 20.20.2`,
  );
  t.assert.ok(unsupportedNode('22.17.9')?.includes('22.17.9'));
  t.assert.strictEqual(unsupportedNode('22.18.0'), undefined);
  t.assert.strictEqual(unsupportedNode('24.21.0'), undefined);
  t.assert.strictEqual(unsupportedNode('26.0.0-pre'), undefined);
  t.assert.strictEqual(unsupportedNode(process.versions.node), undefined, 'the Node running the tests is supported');
});

test('the minimum is the one package.json declares in engines', async (t: TestContext) => {
  const { default: pkg } = await import('../../package.json', { with: { type: 'json' } });
  t.assert.strictEqual(pkg.engines.node, `>=${MINIMUM_NODE}`);
});
