// "Install the language server with pip": the user picks an interpreter (or has a `.venv`
// created), confirms what to install, and `python -m pip install …` runs with its output in the
// sglang-lsp output channel. Every failure ends in an error message that says what failed.

import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { exeName, isExecutableFile, pythonIn } from './locate';
import { installTargets, Interpreter } from './python';

export interface RunResult {
  code: number | null;
  /** The last lines the process wrote to stderr (for the error message). */
  tail: string;
  error?: string;
}

/** Run a process, its output streamed to `output`; cancellable. */
export function run(
  command: string,
  args: string[],
  output: vscode.OutputChannel,
  token?: vscode.CancellationToken,
  cwd?: string,
): Promise<RunResult> {
  output.appendLine(`$ ${[command, ...args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}`);
  return new Promise((resolve) => {
    let tail = '';
    const child = spawn(command, args, { cwd, env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } });
    const keep = (chunk: Buffer) => {
      const text = chunk.toString();
      output.append(text);
      return text;
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', (chunk: Buffer) => {
      tail = (tail + keep(chunk)).split('\n').slice(-6).join('\n');
    });
    const cancel = token?.onCancellationRequested(() => child.kill());
    child.on('error', (err) => {
      cancel?.dispose();
      resolve({ code: null, tail, error: err.message });
    });
    child.on('close', (code) => {
      cancel?.dispose();
      output.appendLine(`(exit code ${code})`);
      resolve({ code, tail });
    });
  });
}

function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return lines[lines.length - 1] ?? '';
}

interface TargetItem extends vscode.QuickPickItem {
  target?: Interpreter;
  createVenvIn?: string;
  browse?: boolean;
}

async function pickInterpreter(output: vscode.OutputChannel): Promise<TargetItem | undefined> {
  const targets = await installTargets((line) => output.appendLine(line));
  const items: TargetItem[] = targets.map((t) => ({ label: t.python, description: t.source, target: t }));
  const base = targets.find((t) => t.source === 'on PATH' || t.source === 'selected in the Python extension');
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const venv = path.join(folder.uri.fsPath, '.venv');
    if (folder.uri.scheme === 'file' && base && !fs.existsSync(venv)) {
      items.push({
        label: `$(add) Create ${venv}`,
        description: `a new virtualenv (with ${base.python}), then install into it`,
        createVenvIn: venv,
        target: base,
      });
    }
  }
  items.push({ label: '$(folder-opened) Browse for a Python interpreter…', browse: true });
  const picked = await vscode.window.showQuickPick(items, {
    title: 'sglang-lsp: install the language server into which Python?',
    placeHolder: 'pip install runs with the interpreter you pick',
    ignoreFocusOut: true,
  });
  if (!picked?.browse) {
    return picked;
  }
  const files = await vscode.window.showOpenDialog({
    title: 'Python interpreter to install sglang-lsp into',
    canSelectMany: false,
    openLabel: 'Use this interpreter',
  });
  if (!files?.length) {
    return undefined;
  }
  return { label: files[0].fsPath, target: { python: files[0].fsPath, source: 'chosen' } };
}

/** A workspace folder that is a clone of sglang-lsp itself (its pyproject.toml names the
 * project), offered as what to install. */
function checkoutInWorkspace(): string | undefined {
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    if (folder.uri.scheme !== 'file') {
      continue;
    }
    try {
      const pyproject = fs.readFileSync(path.join(folder.uri.fsPath, 'pyproject.toml'), 'utf8');
      if (/^name\s*=\s*"sglang-lsp"\s*$/m.test(pyproject)) {
        return folder.uri.fsPath;
      }
    } catch {
      // no pyproject.toml: not a clone
    }
  }
  return undefined;
}

/** Ask, install, and return the path of the installed executable (undefined: cancelled or
 * failed, after an error message). */
export async function installServer(output: vscode.OutputChannel): Promise<string | undefined> {
  const picked = await pickInterpreter(output);
  if (!picked?.target) {
    return undefined;
  }
  const spec = await vscode.window.showInputBox({
    title: 'sglang-lsp: what to install',
    prompt:
      'A clone of the sglang-lsp repository (its path), a wheel file, or git+ and the repository\'s URL ' +
      '(passed to pip install; sglang-lsp is not on PyPI yet)',
    placeHolder: '/path/to/sglang-lsp',
    value: checkoutInWorkspace() ?? '',
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() ? undefined : 'Name what pip should install'),
  });
  if (!spec?.trim()) {
    return undefined;
  }
  output.show(true);
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'sglang-lsp', cancellable: true },
    async (progress, token) => {
      let python = picked.target!.python;
      if (picked.createVenvIn) {
        progress.report({ message: `creating ${picked.createVenvIn}…` });
        const venv = await run(python, ['-m', 'venv', picked.createVenvIn], output, token);
        if (venv.code !== 0) {
          void showFailure(`creating the virtualenv ${picked.createVenvIn} with ${python} failed`, venv, output);
          return undefined;
        }
        python = pythonIn(picked.createVenvIn, process.platform);
      }
      progress.report({ message: `pip install ${spec.trim()} (${python})…` });
      const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
      const pip = await run(python, ['-m', 'pip', 'install', spec.trim()], output, token, cwd);
      if (token.isCancellationRequested) {
        void vscode.window.showWarningMessage('sglang-lsp: the installation was cancelled.');
        return undefined;
      }
      if (pip.code !== 0) {
        void showFailure(`pip install ${spec.trim()} into ${python} failed`, pip, output);
        return undefined;
      }
      const exe = path.join(path.dirname(python), exeName(process.platform));
      if (!isExecutableFile(exe)) {
        void vscode.window.showErrorMessage(
          `sglang-lsp: pip install succeeded, but no ${exeName(process.platform)} appeared next to ${python}. ` +
            'Set sglang-lsp.path to the installed executable.',
          'Open Settings',
        ).then((choice) => {
          if (choice) {
            void vscode.commands.executeCommand('workbench.action.openSettings', 'sglang-lsp.path');
          }
        });
        return undefined;
      }
      void vscode.window.showInformationMessage(`sglang-lsp: installed ${exe}`);
      return exe;
    },
  );
}

async function showFailure(what: string, result: RunResult, output: vscode.OutputChannel): Promise<void> {
  const why = result.error ?? (lastLine(result.tail) || `exit code ${result.code}`);
  const choice = await vscode.window.showErrorMessage(`sglang-lsp: ${what}: ${why}`, 'Show Output');
  if (choice) {
    output.show();
  }
}
