import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { ConfigError } from '../../src/config/config-error.ts';
import { loadConfigFile } from '../../src/config/load-file.ts';
import { tempFiles } from '../helpers/cluster.ts';
import { requireTool } from '../helpers/require-tool.ts';
import { ThrowawayCa } from '../helpers/throwaway-ca.ts';

const skip = requireTool('openssl');

/** A directory with a CA, a server pair in `certs/`, and `app.yaml` holding `yaml`. */
function project(t: TestContext, yaml: string) {
  const dir = tempFiles(t, { 'app.yaml': yaml });
  mkdirSync(join(dir, 'certs'));
  const ca = new ThrowawayCa(join(dir, 'certs'));
  const server = ca.issue('server', 'localhost', 'serverAuth');
  return { dir, file: join(dir, 'app.yaml'), ca, server };
}

function problemsOf(file: string): string {
  try {
    loadConfigFile(file, {});
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail('the config loaded');
}

test('tls: the files are resolved against the YAML file, and a good pair loads', { skip }, (t: TestContext) => {
  const { dir, file } = project(
    t,
    'port: 0\ntls:\n  certFile: certs/server.pem\n  keyFile: certs/server.key\n  caFile: certs/ca.pem\nhttp2: true\n',
  );
  const { config } = loadConfigFile(file, {});
  assert.equal(config.tls?.certFile, join(dir, 'certs/server.pem'));
  assert.equal(config.tls?.keyFile, join(dir, 'certs/server.key'));
  assert.equal(config.tls?.caFile, join(dir, 'certs/ca.pem'));
  assert.equal(config.http2, true);
});

test('tls: a missing file, a key of another certificate, a CA file without certificates: errors naming file, line and key', {
  skip,
}, (t: TestContext) => {
  const missing = project(t, 'port: 0\ntls:\n  certFile: certs/nowhere.pem\n  keyFile: certs/server.key\n');
  assert.match(problemsOf(missing.file), /app\.yaml:3: tls\.certFile: .*certs\/nowhere\.pem does not exist/);

  const other = project(t, 'port: 0\ntls:\n  certFile: certs/server.pem\n  keyFile: certs/other.key\n');
  other.ca.issue('other', 'localhost', 'serverAuth');
  assert.match(
    problemsOf(other.file),
    /app\.yaml:4: tls\.keyFile: .*certs\/other\.key is not the private key of the certificate in .*certs\/server\.pem/,
  );

  const garbled = project(t, 'port: 0\ntls:\n  certFile: certs/server.key\n  keyFile: certs/server.key\n');
  assert.match(problemsOf(garbled.file), /app\.yaml:3: tls\.certFile: .*server\.key holds no PEM certificate/);

  const badCa = project(t, 'port: 0\ntls:\n  certFile: certs/server.pem\n  keyFile: certs/server.key\n  caFile: certs/ca.txt\n');
  writeFileSync(join(badCa.dir, 'certs/ca.txt'), 'not a certificate\n');
  assert.match(problemsOf(badCa.file), /app\.yaml:5: tls\.caFile: .*ca\.txt holds no PEM certificate/);

  const noKey = project(t, 'port: 0\ntls:\n  certFile: certs/server.pem\n  keyFile: certs/server.pem\n');
  assert.match(problemsOf(noKey.file), /app\.yaml:4: tls\.keyFile: .*server\.pem is not an unencrypted PEM private key/);
});

test('tls: requestClientCert needs caFile; keyFile is required', { skip }, (t: TestContext) => {
  const mtls = project(t, 'port: 0\ntls:\n  certFile: certs/server.pem\n  keyFile: certs/server.key\n  requestClientCert: true\n');
  assert.match(problemsOf(mtls.file), /app\.yaml:5: tls\.requestClientCert: requires tls\.caFile/);
  const half = project(t, 'port: 0\ntls:\n  certFile: certs/server.pem\n');
  assert.match(problemsOf(half.file), /app\.yaml:2: tls: must have required property 'keyFile'/);
});
