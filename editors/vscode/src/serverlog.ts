// The server's log lines (`sglang-lsp serve` writes "DATE TIME LEVEL logger: message" to
// stderr, see server/sglang_lsp/lsp/__init__.py) → the output channel at their own level, its
// timestamp instead of theirs. Lines without a level (a traceback) keep the previous one.

import type { Readable } from 'stream';
import type { LogOutputChannel } from 'vscode';

const LINE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/;

export type Level = 'debug' | 'info' | 'warn' | 'error';

const LEVELS: Record<string, Level> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error', CRITICAL: 'error' };

export function classify(line: string, previous: Level): [Level, string] {
  const m = LINE.exec(line);
  return m ? [LEVELS[m[1]], m[2]] : [previous, line];
}

export function forwardLog(stream: Readable, output: LogOutputChannel): void {
  let pending = '';
  let level: Level = 'info';
  const emit = (line: string) => {
    if (!line.trim()) {
      return;
    }
    const [next, text] = classify(line, level);
    level = next;
    output[level](`[server] ${text}`);
  };
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (pending + chunk).split(/\r?\n/);
    pending = lines.pop() ?? '';
    lines.forEach(emit);
  });
  stream.on('end', () => emit(pending));
}
