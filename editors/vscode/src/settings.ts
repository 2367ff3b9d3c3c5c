// The extension's settings (section `sglang-lsp`): the ones the server reads, passed on in
// `initializationOptions`, `workspace/configuration` answers and `didChangeConfiguration`; and
// the client's own (`path`, `logLevel`, `trace.server`), which the server never sees (it would
// report them as unknown settings).

import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';

export const SECTION = 'sglang-lsp';

/** The keys the server reads: `KNOWN_KEYS` of server/sglang_lsp/lsp/settings.py
 * (tests/test_vscode_package.py keeps the two lists equal). */
export const SERVER_KEYS = ['gpu', 'sglangVersion', 'select', 'ignore', 'modelSearchPaths', 'inlayHints', 'python'] as const;

/** Settings where the settings UI's "" means "not set", which the server wants as null. */
const EMPTY_IS_UNSET = new Set<string>(['gpu', 'sglangVersion', 'python']);

/** The languages the server checks (VS Code language ids): launch scripts and manifests, and the
 * Dockerfiles, docs (their code blocks) and Python files that launch sglang. */
export const LANGUAGES = [
  'shellscript', 'yaml', 'dockercompose', 'dockerfile', 'markdown', 'mdx', 'restructuredtext', 'python',
] as const;

/** The languages of notebook cells the server checks (a cell is a document of its own). */
export const CELL_LANGUAGES = ['python', 'markdown'] as const;

export function config(scope?: vscode.ConfigurationScope): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION, scope);
}

function folderFor(scope?: vscode.ConfigurationScope): vscode.WorkspaceFolder | undefined {
  if (scope instanceof vscode.Uri) {
    return vscode.workspace.getWorkspaceFolder(scope) ?? vscode.workspace.workspaceFolders?.[0];
  }
  return vscode.workspace.workspaceFolders?.[0];
}

/** `~`, `${userHome}` and `${workspaceFolder}` expanded (the variables VS Code leaves to extensions). */
export function expandPath(value: string, scope?: vscode.ConfigurationScope): string {
  let out = value.trim();
  const folder = folderFor(scope);
  out = out.replace(/\$\{userHome\}/g, os.homedir());
  if (folder?.uri.scheme === 'file') {
    out = out.replace(/\$\{workspaceFolder\}/g, folder.uri.fsPath);
  }
  if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) {
    out = path.join(os.homedir(), out.slice(1));
  }
  return out;
}

/** The `sglang-lsp` section as the server expects it: its keys only, "" turned into null,
 * paths expanded. */
export function serverSettings(scope?: vscode.ConfigurationScope): Record<string, unknown> {
  const cfg = config(scope);
  const out: Record<string, unknown> = {};
  for (const key of SERVER_KEYS) {
    let value: unknown = cfg.get(key);
    if (EMPTY_IS_UNSET.has(key) && (value === undefined || (typeof value === 'string' && value.trim() === ''))) {
      value = null;
    }
    if (key === 'modelSearchPaths' && Array.isArray(value)) {
      value = value.map((p) => (typeof p === 'string' ? expandPath(p, scope) : p));
    }
    out[key] = value;
  }
  return out;
}

/** Where a setting changed from the status bar is written: the workspace when one is open. */
export function writeTarget(): vscode.ConfigurationTarget {
  return vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
}
