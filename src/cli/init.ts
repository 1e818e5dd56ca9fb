import { lstat, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isRecord } from '../utils/is-record.ts';
import { appYaml, SCRIPTS, SERVICE_TEST_TS, SERVICE_TS, TSCONFIG_JSON } from './init-templates.ts';

/** Where `flotilla init` writes, and whether it may overwrite. */
export interface InitOptions {
  /** The project's directory (the CLI passes its working directory). */
  directory: string;
  /** Overwrite files that exist, and replace package.json scripts of the same names. */
  force: boolean;
  /** Where the summary, or the reason nothing was written, goes. */
  out: NodeJS.WritableStream;
}

/** package.json as `init` writes it, and what changed, in words. */
export interface MergedPackage {
  pkg: Record<string, unknown>;
  notes: string[];
}

/** npm init's placeholder `test` script: replaced as if there were none. */
const NPM_INIT_TEST = 'echo "Error: no test specified" && exit 1';

/**
 * `flotilla init`: writes a working service into `directory`: `app.yaml`,
 * `src/service.ts`, `test/service.test.ts` and `tsconfig.json`, and adds
 * `"type": "module"` and the `start`, `dev` and `test` scripts to its
 * package.json (created when there is none; every other field is kept).
 * It checks every file first: when one exists and `force` is off, or
 * package.json is not a JSON object, it writes nothing, says why, and
 * resolves 1. Resolves 0 once everything is written.
 *
 * @example
 * const code = await init({ directory: process.cwd(), force: false, out: process.stdout });
 */
export async function init(options: InitOptions): Promise<number> {
  const { directory, force, out } = options;
  const files: Record<string, string> = {
    'app.yaml': appYaml(serviceNameOf(directory)),
    'src/service.ts': SERVICE_TS,
    'test/service.test.ts': SERVICE_TEST_TS,
    'tsconfig.json': TSCONFIG_JSON,
  };
  const pkgFile = join(directory, 'package.json');
  const pkgText = await readIfExists(pkgFile);
  let existing: unknown = {};
  if (pkgText !== undefined) {
    try {
      existing = JSON.parse(pkgText);
    } catch (error) {
      out.write(`flotilla init: package.json is not valid JSON (${(error as Error).message}); nothing was written.\n`);
      return 1;
    }
    if (!isRecord(existing)) {
      out.write('flotilla init: package.json does not hold a JSON object; nothing was written.\n');
      return 1;
    }
  }

  if (!force) {
    const present = await existingFiles(directory, Object.keys(files));
    if (present.length > 0) {
      const list = present.map((name) => `  ${name}\n`).join('');
      out.write(`flotilla init: these files exist already; nothing was written:\n${list}`);
      out.write('Run `npx flotilla init --force` to overwrite them.\n');
      return 1;
    }
  }

  const merged = mergePackageJson(pkgText === undefined ? undefined : (existing as Record<string, unknown>), directory, force);
  for (const [name, content] of Object.entries(files)) {
    const file = join(directory, name);
    await mkdir(dirname(file), { recursive: true });
    // 'wx': a file that appeared since the check is not overwritten either
    await writeFile(file, content, { flag: force ? 'w' : 'wx' });
  }
  await writeFile(pkgFile, formatLike(pkgText, merged.pkg));

  out.write(`flotilla init: wrote ${Object.keys(files).join(', ')}\n`);
  out.write(`package.json: ${merged.notes.join('; ')}\n`);
  out.write(nextSteps());
  return 0;
}

/**
 * package.json with `"type": "module"` and the `start`, `dev` and `test`
 * scripts: a script of the same name that differs is kept unless `force`
 * (npm init's placeholder `test` is replaced). Every other field is kept;
 * without a package.json, one named after the directory.
 *
 * @example
 * mergePackageJson({ name: 'shop', type: 'commonjs' }, '/src/shop', false).pkg.type; // 'module'
 */
export function mergePackageJson(existing: Record<string, unknown> | undefined, directory: string, force: boolean): MergedPackage {
  const notes: string[] = [];
  const pkg: Record<string, unknown> =
    existing === undefined ? { name: packageNameOf(directory), version: '0.1.0', private: true } : { ...existing };
  if (existing === undefined) notes.push('created');
  if (pkg['type'] !== 'module') {
    notes.push(pkg['type'] === undefined ? '"type": "module"' : `"type": "module" (was ${JSON.stringify(pkg['type'])})`);
    pkg['type'] = 'module';
  }
  const scripts: Record<string, unknown> = isRecord(pkg['scripts']) ? { ...pkg['scripts'] } : {};
  const added: string[] = [];
  const kept: string[] = [];
  for (const [name, command] of Object.entries(SCRIPTS)) {
    const current = scripts[name];
    if (current === command) continue;
    if (current === undefined || force || (name === 'test' && current === NPM_INIT_TEST)) {
      scripts[name] = command;
      added.push(name);
    } else {
      kept.push(name);
    }
  }
  pkg['scripts'] = scripts;
  if (added.length > 0) notes.push(`scripts ${added.join(', ')} set`);
  if (kept.length > 0) notes.push(`your scripts ${kept.join(', ')} kept (--force replaces them)`);
  if (notes.length === 0) notes.push('unchanged');
  return { pkg, notes };
}

/**
 * The directory's name as a `serviceName` (`^[A-Za-z0-9][A-Za-z0-9._-]*$`, at most 128 characters).
 *
 * @example
 * serviceNameOf('/home/me/My Shop (v2)'); // 'My-Shop-v2'
 */
export function serviceNameOf(directory: string): string {
  const name = basename(directory)
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .replace(/-+$/, '')
    .slice(0, 128);
  return name === '' ? 'service' : name;
}

/**
 * The directory's name as an npm package name (lower case, URL-safe, no leading `.` or `_`).
 *
 * @example
 * packageNameOf('/home/me/My Shop (v2)'); // 'my-shop-v2'
 */
export function packageNameOf(directory: string): string {
  const name = basename(directory)
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._~-]+/, '')
    .replace(/-+$/, '')
    .slice(0, 214);
  return name === '' ? 'service' : name;
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The names, of those given, that exist in `directory` (a dangling symlink counts). */
async function existingFiles(directory: string, names: readonly string[]): Promise<string[]> {
  const found = await Promise.all(
    names.map((name) =>
      lstat(join(directory, name)).then(
        () => true,
        (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' || error.code === 'ENOTDIR' ? false : Promise.reject(error)),
      ),
    ),
  );
  return names.filter((_, i) => found[i]);
}

/** `value` as JSON indented like `original` (two spaces when there is none), with a final newline. */
function formatLike(original: string | undefined, value: unknown): string {
  const indent = /^([ \t]+)"/m.exec(original ?? '')?.[1] ?? '  ';
  const text = `${JSON.stringify(value, null, indent)}\n`;
  return original?.includes('\r\n') ? text.replaceAll('\n', '\r\n') : text;
}

function nextSteps(): string {
  return `
Next steps:
  npm start      the cluster, in production: http://localhost:3000/items and /health (no /docs)
  npm run dev    one worker, in development: readable logs, the docs at /docs, restarted on save
                 (first: npm install --save-dev pino-pretty)
  npm test       test/*.test.ts under node:test, requests through app.inject
  npx tsc        type checking, after: npm install --save-dev typescript @types/node
`;
}
