import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { type TestContext, test } from 'node:test';

// Every relative link of README.md and of the Markdown files under docs/ must lead somewhere: to a
// file or folder of the repository and, with a `#fragment` into a Markdown file, to one of its headings.

const root = resolve(import.meta.dirname, '../..');

/** README.md and every Markdown file under docs/, as absolute paths. */
function documents(): string[] {
  const found = [join(root, 'README.md')];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk(join(root, 'docs'));
  return found;
}

/** The text without fenced code blocks (their lines kept blank, so that line numbers hold). */
function withoutFences(text: string): string {
  let fence: string | undefined;
  return text
    .split('\n')
    .map((line) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === undefined && marker !== undefined) {
        fence = marker;
        return '';
      }
      if (fence !== undefined) {
        if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
        return '';
      }
      return line;
    })
    .join('\n');
}

/**
 * The anchor GitHub gives a heading: its text as rendered (code spans and links reduced to their
 * text), lower case, every character that is not a letter, a number, `_`, `-` or a space removed,
 * spaces turned into `-`.
 */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a Markdown file: its headings' slugs (repeats get `-1`, `-2`…), and explicit `id`/`name` anchors. */
function anchorsOf(file: string): Set<string> {
  const text = withoutFences(readFileSync(file, 'utf8'));
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of text.matchAll(/^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = slug(match[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  return anchors;
}

interface Link {
  file: string;
  line: number;
  target: string;
}

/** The inline links and images (`[text](target)`) and link definitions (`[label]: target`) outside code. */
function linksOf(file: string): Link[] {
  const lines = withoutFences(readFileSync(file, 'utf8')).split('\n');
  const links: Link[] = [];
  for (const [i, raw] of lines.entries()) {
    // code spans hold no links: `[x](y)` in one is an example, not a link
    const line = raw.replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, '``');
    for (const match of line.matchAll(/\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ file, line: i + 1, target: match[1]! });
    const definition = /^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (definition !== null) links.push({ file, line: i + 1, target: definition[1]! });
  }
  return links;
}

/** What is wrong with a link, or undefined when it resolves. External links (a scheme, `//host`) are not followed. */
function problemOf(link: Link, anchors: (file: string) => Set<string>): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target) || link.target.startsWith('//')) return undefined;
  const hash = link.target.indexOf('#');
  const path = decodeURIComponent(hash === -1 ? link.target : link.target.slice(0, hash));
  const fragment = hash === -1 ? undefined : decodeURIComponent(link.target.slice(hash + 1));
  const target = path === '' ? link.file : path.startsWith('/') ? join(root, path) : resolve(dirname(link.file), path);
  if (relative(root, target).startsWith('..')) return `${link.target} leaves the repository`;
  if (!existsSync(target)) return `${link.target}: no such file`;
  if (fragment === undefined || fragment === '') return undefined;
  if (statSync(target).isDirectory() || !target.endsWith('.md')) return `${link.target}: a fragment into a file that is not Markdown`;
  if (!anchors(target).has(fragment)) return `${link.target}: ${relative(root, target)} has no heading with the anchor #${fragment}`;
  return undefined;
}

test("headings' anchors follow GitHub's rules", (t: TestContext) => {
  t.assert.strictEqual(slug('Connections and `cluster.balancing`'), 'connections-and-clusterbalancing');
  t.assert.strictEqual(slug("The service's own settings"), 'the-services-own-settings');
  t.assert.strictEqual(slug('Production mode: `env` and `NODE_ENV`'), 'production-mode-env-and-node_env');
  t.assert.strictEqual(slug('`/health` and `/metrics`'), 'health-and-metrics');
  t.assert.strictEqual(slug('A [linked](x.md) heading — with a dash'), 'a-linked-heading--with-a-dash');
});

test('every relative link in README.md and docs/ resolves, fragments included', (t: TestContext) => {
  const cache = new Map<string, Set<string>>();
  const anchors = (file: string): Set<string> => {
    const found = cache.get(file) ?? anchorsOf(file);
    cache.set(file, found);
    return found;
  };
  const links = documents().flatMap(linksOf);
  t.assert.ok(links.length >= 100, `${links.length} links found`);
  const broken = links.flatMap((link) => {
    const problem = problemOf(link, anchors);
    return problem === undefined ? [] : [`${relative(root, link.file)}:${link.line}: ${problem}`];
  });
  t.assert.deepStrictEqual(broken, []);
});

test('the link check finds a missing file and a missing heading', (t: TestContext) => {
  const file = join(root, 'docs/README.md');
  const anchors = (target: string) => anchorsOf(target);
  t.assert.match(problemOf({ file, line: 1, target: 'guides/no-such-guide.md' }, anchors) ?? '', /no such file/);
  t.assert.match(problemOf({ file, line: 1, target: 'guides/shutdown.md#no-such-heading' }, anchors) ?? '', /no heading/);
  t.assert.strictEqual(problemOf({ file, line: 1, target: 'guides/shutdown.md#hooks' }, anchors), undefined);
  t.assert.strictEqual(problemOf({ file, line: 1, target: 'https://example.com/x.md#y' }, anchors), undefined);
});
