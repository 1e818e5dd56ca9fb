import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { mayLoadAhead } from '../../src/primary/early-worker.ts';
import { tempFiles } from '../helpers/cluster.ts';

test('the early worker loads ahead only when the config file can name no preload module', (t: TestContext) => {
  const dir = tempFiles(t, {
    'plain.yaml': 'serviceName: a\nworkers: 2\nservice: ./service.ts\n',
    'preload.yaml': 'serviceName: a\npreload: [./otel.ts]\nservice: ./service.ts\n',
    'flow.yaml': '{ serviceName: a, preload: [./otel.ts], service: ./service.ts }\n',
    'hsts.yaml': 'serviceName: a\nsecurityHeaders: { hsts: { preload: true } }\n',
    'escaped.yaml': 'serviceName: a\n"pre\\x6coad": [./otel.ts]\n',
  });
  const ahead = (name: string) => mayLoadAhead(join(dir, name));
  t.assert.strictEqual(ahead('plain.yaml'), true);
  t.assert.strictEqual(ahead('preload.yaml'), false);
  t.assert.strictEqual(ahead('flow.yaml'), false);
  t.assert.strictEqual(ahead('hsts.yaml'), false, 'the word anywhere says no: the check reads text, not YAML');
  t.assert.strictEqual(ahead('escaped.yaml'), false, 'a backslash could spell the key');
  t.assert.strictEqual(ahead('missing.yaml'), false, 'an unreadable file says no; the commands report it');
  t.assert.strictEqual(mayLoadAhead(null), false, 'no config file');
});
