// Unit tests of the server-log forwarding (src/serverlog.ts): `npm run test:unit`.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { classify, forwardLog } from '../src/serverlog.ts';

test('a log line keeps its level, without the server\'s timestamp', () => {
  assert.deepEqual(classify('2026-12-01 03:30:39,675 INFO sglang_lsp.lsp: serving on stdio', 'debug'),
    ['info', 'sglang_lsp.lsp: serving on stdio']);
  assert.deepEqual(classify('2026-12-01 03:30:39,675 WARNING sglang_lsp.lsp: settings', 'info'), ['warn', 'sglang_lsp.lsp: settings']);
  assert.deepEqual(classify('2026-12-01 03:30:39,675 CRITICAL x: y', 'info'), ['error', 'x: y']);
});

test('a line without a level (a traceback) keeps the previous level', () => {
  assert.deepEqual(classify('Traceback (most recent call last):', 'error'), ['error', 'Traceback (most recent call last):']);
});

test('lines split across chunks are forwarded whole, at their levels', async () => {
  const seen = [];
  const channel = Object.fromEntries(['debug', 'info', 'warn', 'error'].map((level) => [level, (text) => seen.push([level, text])]));
  const stream = new PassThrough();
  forwardLog(stream, channel);
  stream.write('2026-12-01 03:30:39,675 ERROR a: failed\nTraceback (most');
  stream.write(' recent call last):\n\n2026-12-01 03:30:40,000 DEBUG b: checked');
  stream.end();
  await new Promise((resolve) => stream.on('end', resolve));
  assert.deepEqual(seen, [
    ['error', '[server] a: failed'],
    ['error', '[server] Traceback (most recent call last):'],
    ['debug', '[server] b: checked'],
  ]);
});
