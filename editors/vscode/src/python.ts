// The interpreter selected in the Python extension (ms-python.python), when that extension is
// installed; and the Python interpreters an install can go into.

import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { isExecutableFile, pythonIn, VENV_NAMES } from './locate';

interface PythonApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { path: string } | undefined;
  };
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } | undefined;
  };
}

const ACTIVATION_TIMEOUT_MS = 5000;

function withTimeout<T>(promise: Thenable<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    promise.then(
      (value) => { clearTimeout(timer); resolve(value); },
      () => { clearTimeout(timer); resolve(undefined); },
    );
  });
}

/** The selected interpreter's path, or undefined (no Python extension, or it did not answer
 * within a few seconds). */
export async function selectedInterpreter(resource?: vscode.Uri, log?: (line: string) => void): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>('ms-python.python');
  if (!ext) {
    return undefined;
  }
  const api = ext.isActive ? ext.exports : await withTimeout(ext.activate(), ACTIVATION_TIMEOUT_MS);
  if (!api) {
    log?.('the Python extension did not activate in time; its interpreter is not searched');
    return undefined;
  }
  try {
    const active = api.environments?.getActiveEnvironmentPath?.(resource)?.path;
    if (active) {
      return active;
    }
    return api.settings?.getExecutionDetails?.(resource)?.execCommand?.[0];
  } catch (err) {
    log?.(`asking the Python extension for its interpreter failed: ${String(err)}`);
    return undefined;
  }
}

export interface Interpreter {
  python: string;
  source: string;
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutableFile(path.join(dir, name))) {
      return path.join(dir, name);
    }
  }
  return undefined;
}

/** Interpreters to offer for `pip install`, most local first, without duplicates. */
export async function installTargets(log?: (line: string) => void): Promise<Interpreter[]> {
  const out: Interpreter[] = [];
  const seen = new Set<string>();
  const add = (python: string | undefined, source: string) => {
    if (!python || seen.has(python)) {
      return;
    }
    seen.add(python);
    out.push({ python, source });
  };
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    if (folder.uri.scheme !== 'file') {
      continue;
    }
    for (const venv of VENV_NAMES) {
      const python = pythonIn(path.join(folder.uri.fsPath, venv), process.platform);
      if (fs.existsSync(python)) {
        add(python, `virtualenv ${venv} of ${folder.name}`);
      }
    }
  }
  let selected = await selectedInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri, log);
  if (selected && fs.existsSync(selected) && fs.statSync(selected).isDirectory()) {
    selected = pythonIn(selected, process.platform);
  }
  add(selected, 'selected in the Python extension');
  for (const name of process.platform === 'win32' ? ['python.exe', 'py.exe'] : ['python3', 'python']) {
    add(onPath(name), 'on PATH');
  }
  return out;
}
