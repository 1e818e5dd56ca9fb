import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ownSockets } from '../../src/cluster/balancing.ts';

test('balancing: kernel gives the workers sockets of their own on Linux only; primary never does', () => {
  assert.equal(ownSockets('kernel', 'linux'), true);
  // libuv refuses SO_REUSEPORT where the kernel does not balance with it: kernel mode shares one socket there
  for (const platform of ['darwin', 'win32', 'freebsd'] as const) assert.equal(ownSockets('kernel', platform), false, platform);
  for (const platform of ['linux', 'darwin'] as const) assert.equal(ownSockets('primary', platform), false, platform);
});
