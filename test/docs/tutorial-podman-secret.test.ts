import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, type TestContext, test } from 'node:test';
import { requireTool } from '../helpers/require-tool.ts';

/**
 * The Podman aside of docs/tutorial/08-kubernetes.md, run as a reader runs it without a cluster:
 * its commands make the token and the Secret Podman reads. `podman` here only keeps what
 * `podman secret create` is given, and `curl` does nothing (the tutorial's own test plays the pod).
 */

const page = readFileSync(resolve(import.meta.dirname, '../../docs/tutorial/08-kubernetes.md'), 'utf8');
const aside = [...page.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string).find((b) => b.includes('podman secret create'));
const dir = mkdtempSync(join(tmpdir(), 'flotilla-podman-secret-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('the aside needs no kubectl, and the Secret it makes is valid JSON holding the token in base64', {
  skip: requireTool('openssl'),
}, (t: TestContext) => {
  t.assert.ok(aside !== undefined, 'a sh block of step 8 creates the podman secret');
  t.assert.doesNotMatch(aside, /kubectl/);
  const secret = join(dir, 'secret.json');
  const stubs = `podman() { if [ "$1 $2" = "secret create" ]; then cat > '${secret}'; fi; }\ncurl() { :; }\n`;
  // the token the aside made, printed after it has run
  const token = execFileSync('sh', ['-euc', `${stubs}${aside}printf '%s' "$TOKEN"`], { encoding: 'utf8' });
  t.assert.match(token, /^[0-9a-f]{64}$/);
  const parsed = JSON.parse(readFileSync(secret, 'utf8')) as { apiToken: string };
  t.assert.deepStrictEqual(Object.keys(parsed), ['apiToken']);
  t.assert.strictEqual(Buffer.from(parsed.apiToken, 'base64').toString(), token);
});
