import { type TestContext, test } from 'node:test';
import { isIgnoredPath } from '../../src/cli/editor-files.ts';

test("editors' temporary and swap files, and the directories flotilla dev does not watch, are ignored", (t: TestContext) => {
  const ignored = [
    '.service.ts.swp',
    'src/.service.ts.swo',
    'service.ts~',
    '.#service.ts',
    '#service.ts#',
    '4913',
    'lib/4913',
    'service.ts.tmp',
    '.service.ts.kate-swp',
    'service.ts___jb_tmp___',
    'service.ts___jb_old___',
    'sedAb12Cd',
    'dev.log',
    'node_modules/x/index.js',
    'dist/index.js',
    '.git/HEAD',
    'coverage/lcov.info',
  ];
  for (const path of ignored) t.assert.ok(isIgnoredPath(path), path);
  for (const path of ['service.ts', 'lib/deep/answer.ts', 'sed.ts', 'sedan1.ts', 'routes/4913.ts', 'app.yaml'])
    t.assert.ok(!isIgnoredPath(path), path);
});
