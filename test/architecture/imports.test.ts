import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { type TestContext, test } from 'node:test';

const SRC = resolve(import.meta.dirname, '../../src');

/** Which top-level folders of src/ each folder must not import (ARCHITECTURE.md, "Processes and threads"). */
const FORBIDDEN: Record<string, readonly string[]> = {
  app: ['primary', 'worker', 'cli', 'ipc'],
  worker: ['primary', 'cli'],
  primary: ['worker', 'cli'],
  ipc: ['app', 'primary', 'worker', 'cli', 'config'],
  config: ['app', 'primary', 'worker', 'cli', 'ipc'],
  cluster: ['primary', 'worker', 'cli'],
  errors: ['app', 'primary', 'worker', 'cli'],
  metrics: ['app', 'primary', 'worker', 'cli'],
  scheduler: ['app', 'primary', 'worker', 'cli'],
  coordination: ['app', 'primary', 'worker', 'cli', 'ipc'],
  utils: ['app', 'primary', 'worker', 'cli', 'ipc', 'config', 'cluster', 'errors', 'metrics', 'scheduler', 'i18n'],
};

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith('.ts')) yield path;
  }
}

const SPECIFIER = /(?:^|\n)\s*(?:import|export)[^'"`]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

test('the folders of src/ import each other only as the architecture allows', (t: TestContext) => {
  const violations: string[] = [];
  for (const file of sources(SRC)) {
    const from = relative(SRC, file).split('/')[0] ?? '';
    const forbidden = FORBIDDEN[from] ?? [];
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2] ?? '';
      if (!specifier.startsWith('.')) continue;
      const to = relative(SRC, resolve(dirname(file), specifier)).split('/')[0] ?? '';
      if (forbidden.includes(to)) violations.push(`${relative(SRC, file)} imports ${specifier}`);
    }
  }
  t.assert.deepStrictEqual(violations, []);
});
