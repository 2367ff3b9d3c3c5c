// Unit tests of the server search (src/locate.ts), in plain Node 24 (which runs TypeScript by
// stripping the types): `npm run test:unit`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { candidates, findServer, parseVersion } from '../src/locate.ts';

const base = { configured: '', folders: ['/ws'], pathEnv: '/usr/local/bin:/usr/bin', platform: 'linux' };
const never = () => false;

test('search order: workspace .venv, venv, the Python extension interpreter, PATH', () => {
  const files = candidates({ ...base, interpreter: '/envs/py311/bin/python' }, never).map((c) => c.file);
  assert.deepEqual(files, [
    '/ws/.venv/bin/sglang-lsp',
    '/ws/venv/bin/sglang-lsp',
    '/envs/py311/bin/sglang-lsp',
    '/usr/local/bin/sglang-lsp',
    '/usr/bin/sglang-lsp',
  ]);
});

test('an interpreter given as an environment folder is searched in its bin/', () => {
  const isDir = (p) => p === '/envs/py311';
  const files = candidates({ ...base, folders: [], pathEnv: '', interpreter: '/envs/py311' }, isDir).map((c) => c.file);
  assert.deepEqual(files, ['/envs/py311/bin/sglang-lsp']);
});

test('the first executable candidate wins', () => {
  const result = findServer(base, (p) => p === '/ws/venv/bin/sglang-lsp' || p === '/usr/bin/sglang-lsp', never);
  assert.equal(result.found?.file, '/ws/venv/bin/sglang-lsp');
  assert.equal(result.found?.source, 'workspace venv');
  assert.equal(result.looked.length, 2);
});

test('nothing found: every place looked at is reported', () => {
  const result = findServer(base, never, never);
  assert.equal(result.found, undefined);
  assert.equal(result.badSetting, undefined);
  assert.equal(result.looked.length, 4);
});

test('a configured path is the only candidate: a wrong one is reported, not replaced', () => {
  const everywhere = (p) => p !== '/opt/nothing/sglang-lsp';
  const result = findServer({ ...base, configured: '/opt/nothing/sglang-lsp' }, everywhere, never);
  assert.equal(result.found, undefined);
  assert.match(result.badSetting, /sglang-lsp\.path is set to "\/opt\/nothing\/sglang-lsp"/);
});

test('a configured relative path is taken from the first workspace folder; a folder as a virtualenv', () => {
  assert.equal(findServer({ ...base, configured: 'tools/sglang-lsp' }, () => true, never).found?.file, '/ws/tools/sglang-lsp');
  const isDir = (p) => p === '/ws/.env';
  const result = findServer({ ...base, configured: '.env' }, (p) => p === '/ws/.env/bin/sglang-lsp', isDir);
  assert.equal(result.found?.file, '/ws/.env/bin/sglang-lsp');
});

test('Windows: Scripts\\sglang-lsp.exe and ; in PATH', () => {
  const files = candidates({ configured: '', folders: ['C:\\ws'], pathEnv: 'C:\\py;C:\\bin', platform: 'win32' }, never)
    .map((c) => c.file);
  assert.deepEqual(files, [
    'C:\\ws\\.venv\\Scripts\\sglang-lsp.exe',
    'C:\\ws\\venv\\Scripts\\sglang-lsp.exe',
    'C:\\py\\sglang-lsp.exe',
    'C:\\bin\\sglang-lsp.exe',
  ]);
});

test('the --version line gives the server version and its default sglang target', () => {
  assert.deepEqual(parseVersion('sglang-lsp 0.1.0 (default sglang target 0.5.23)'), { server: '0.1.0', defaultSglang: '0.5.23' });
  assert.deepEqual(parseVersion('something else'), { server: undefined, defaultSglang: undefined });
});
