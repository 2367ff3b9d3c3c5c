// Where the `sglang-lsp` executable is: no `vscode` import here, so that the search can be
// unit-tested in plain Node (test/locate.test.mjs).
//
// Order: the `sglang-lsp.path` setting (when set, it is the only candidate: a wrong path is
// reported, never silently replaced by another server); the workspace folders' `.venv` and
// `venv`; the interpreter selected in the Python extension; `PATH`.

import * as fs from 'fs';
import * as path from 'path';

export interface SearchInputs {
  /** `sglang-lsp.path`, already expanded (`~`, `${workspaceFolder}`); "" when not set. */
  configured: string;
  /** Local paths of the workspace folders. */
  folders: string[];
  /** The Python extension's selected interpreter (an executable, or an environment's folder). */
  interpreter?: string;
  /** The `PATH` to search. */
  pathEnv: string;
  platform: NodeJS.Platform;
}

export interface Candidate {
  file: string;
  /** Where it came from, for messages: "setting sglang-lsp.path", "workspace .venv" … */
  source: string;
}

export interface SearchResult {
  found?: Candidate;
  /** Every place looked at, in order (for the "not found" message and the output channel). */
  looked: Candidate[];
  /** Set when `sglang-lsp.path` names something that is no executable. */
  badSetting?: string;
}

export const VENV_NAMES = ['.venv', 'venv'];

export function exeName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'sglang-lsp.exe' : 'sglang-lsp';
}

export function scriptsDir(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'Scripts' : 'bin';
}

function pathApi(platform: NodeJS.Platform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}

/** The executable of a virtualenv's python, or of a folder given as an environment. */
export function pythonIn(envDir: string, platform: NodeJS.Platform): string {
  const p = pathApi(platform);
  return p.join(envDir, scriptsDir(platform), platform === 'win32' ? 'python.exe' : 'python');
}

/** The candidates, in search order. */
export function candidates(inputs: SearchInputs, isDir: (file: string) => boolean): Candidate[] {
  const p = pathApi(inputs.platform);
  const exe = exeName(inputs.platform);
  const bin = scriptsDir(inputs.platform);
  if (inputs.configured) {
    let file = inputs.configured;
    if (!p.isAbsolute(file) && inputs.folders.length) {
      file = p.resolve(inputs.folders[0], file);
    }
    if (isDir(file)) {
      // a virtualenv or a folder holding the executable
      return [
        { file: p.join(file, bin, exe), source: 'setting sglang-lsp.path' },
        { file: p.join(file, exe), source: 'setting sglang-lsp.path' },
      ];
    }
    return [{ file, source: 'setting sglang-lsp.path' }];
  }
  const out: Candidate[] = [];
  for (const folder of inputs.folders) {
    for (const venv of VENV_NAMES) {
      out.push({ file: p.join(folder, venv, bin, exe), source: `workspace ${venv}` });
    }
  }
  if (inputs.interpreter) {
    const dir = isDir(inputs.interpreter) ? p.join(inputs.interpreter, bin) : p.dirname(inputs.interpreter);
    out.push({ file: p.join(dir, exe), source: 'Python extension interpreter' });
  }
  for (const dir of inputs.pathEnv.split(inputs.platform === 'win32' ? ';' : ':')) {
    if (dir) {
      out.push({ file: p.join(dir, exe), source: 'PATH' });
    }
  }
  return out;
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function isDirectory(file: string): boolean {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
}

export function findServer(
  inputs: SearchInputs,
  isExecutable: (file: string) => boolean = isExecutableFile,
  isDir: (file: string) => boolean = isDirectory,
): SearchResult {
  const looked: Candidate[] = [];
  for (const candidate of candidates(inputs, isDir)) {
    looked.push(candidate);
    if (isExecutable(candidate.file)) {
      return { found: candidate, looked };
    }
  }
  if (inputs.configured) {
    return { looked, badSetting: `sglang-lsp.path is set to "${inputs.configured}", but no sglang-lsp executable is there` };
  }
  return { looked };
}

/** "sglang-lsp 0.1.0 (default sglang target 0.5.23)" → the parts (undefined when not found). */
export function parseVersion(text: string): { server?: string; defaultSglang?: string } {
  const server = /sglang-lsp\s+(\S+)/.exec(text)?.[1];
  const defaultSglang = /default sglang target\s+([^\s)]+)/.exec(text)?.[1];
  return { server, defaultSglang };
}
