// The sglang-lsp extension: starts `sglang-lsp serve` (found on the configured path, in the
// workspace's virtualenv, in the Python extension's interpreter or on PATH) with
// vscode-languageclient, keeps its settings in sync, and adds a status-bar item and commands.

import { ChildProcess, execFile, spawn } from 'child_process';
import * as vscode from 'vscode';
import {
  ConfigurationParams,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';
import { commandArguments, EFFECTIVE_SCHEME, EffectiveDocuments, SERVER_EFFECTIVE_COMMAND, showEffective } from './effective';
import { askForLine, ExplanationDocuments, isExplanation, render, SCHEME, SERVER_EXPLAIN_COMMAND } from './explain';
import { installServer } from './install';
import { exeName, findServer, parseVersion, SearchResult } from './locate';
import { forwardLog } from './serverlog';
import { selectedInterpreter } from './python';
import { CELL_LANGUAGES, config, expandPath, LANGUAGES, SECTION, SERVER_KEYS, serverSettings, writeTarget } from './settings';
import { pickSetting, ServerInfo, StatusBar } from './status';

const VERSION_TIMEOUT_MS = 20000;

let client: LanguageClient | undefined;
let serverProcess: ChildProcess | undefined;
let output: vscode.LogOutputChannel;
let status: StatusBar;
let effectiveDocuments: EffectiveDocuments;
/** Start/stop/restart run one after the other, never interleaved. */
let queue: Promise<unknown> = Promise.resolve();

function serialized<T>(task: () => Promise<T>): Promise<T> {
  const next = queue.then(task, task);
  queue = next.catch(() => undefined);
  return next;
}

function log(line: string): void {
  output.info(line);
}

async function search(): Promise<SearchResult> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  const configured = expandPath(config().get<string>('path', ''));
  const inputs = { configured, folders, pathEnv: process.env.PATH ?? '', platform: process.platform };
  let result = findServer(inputs);
  if (!result.found && !configured) {
    // the Python extension is asked only when the cheap places have nothing
    const interpreter = await selectedInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri, log);
    if (interpreter) {
      result = findServer({ ...inputs, interpreter });
    }
  }
  return result;
}

function version(file: string): Promise<{ ok: boolean; text: string }> {
  return new Promise((resolve) => {
    execFile(file, ['--version'], { timeout: VERSION_TIMEOUT_MS }, (err, stdout, stderr) => {
      const text = `${stdout}${stderr}`.trim();
      resolve({ ok: !err, text: err ? `${err.message}${text ? `\n${text}` : ''}` : text });
    });
  });
}

async function offerInstall(message: string): Promise<void> {
  const choice = await vscode.window.showErrorMessage(message, 'Install with pip…', 'Set Path…', 'Show Output');
  if (choice === 'Install with pip…') {
    await vscode.commands.executeCommand('sglang-lsp.installServer');
  } else if (choice === 'Set Path…') {
    await vscode.commands.executeCommand('workbench.action.openSettings', `${SECTION}.path`);
  } else if (choice === 'Show Output') {
    output.show();
  }
}

async function start(): Promise<void> {
  status.set('starting');
  const found = await search();
  for (const c of found.looked) {
    log(`looked for the server at ${c.file} (${c.source})`);
  }
  if (!found.found) {
    status.set('missing', {});
    const message = found.badSetting
      ? `sglang-lsp: ${found.badSetting}.`
      : `sglang-lsp: the language server (${exeName(process.platform)}) was not found in the workspace's .venv or venv, ` +
        "the Python extension's interpreter or PATH. Install it with pip, or set sglang-lsp.path.";
    log(message);
    void offerInstall(message);
    return;
  }
  const file = found.found.file;
  log(`using ${file} (${found.found.source})`);
  const probe = await version(file);
  log(`${file} --version: ${probe.text}`);
  if (!probe.ok) {
    status.set('failed', { file, source: found.found.source });
    void offerInstall(`sglang-lsp: ${file} does not run (\`--version\` failed: ${probe.text.split('\n')[0]}).`);
    return;
  }
  const parsed = parseVersion(probe.text);
  const info: ServerInfo = { file, source: found.found.source, version: parsed.server, defaultSglang: parsed.defaultSglang };

  const args = ['serve', '--log-level', config().get<string>('logLevel', 'info')];
  // spawned here rather than by the client, so that the server's log (stderr) reaches the
  // output channel at its own level instead of all as errors
  const serverOptions: ServerOptions = async () => {
    const proc = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    serverProcess = proc;
    forwardLog(proc.stderr, output);
    proc.on('error', (err) => log(`the server process failed: ${err.message}`));
    proc.on('exit', (code, signal) => log(`the server exited (${signal ?? `exit code ${code}`})`));
    return { reader: proc.stdout, writer: proc.stdin };
  };
  const clientOptions: LanguageClientOptions = {
    // files and untitled buffers of those languages, and the cells of notebooks (a Jupyter
    // notebook's code and markdown cells reach the server as text documents of their own)
    documentSelector: [
      ...LANGUAGES.flatMap((language) => [
        { scheme: 'file', language },
        { scheme: 'untitled', language },
      ]),
      ...CELL_LANGUAGES.map((language) => ({ scheme: 'vscode-notebook-cell', language })),
    ],
    initializationOptions: serverSettings(),
    outputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    middleware: {
      workspace: {
        // VS Code answers with the whole section, the client's own settings included: give the
        // server only its own keys
        configuration: async (params: ConfigurationParams, token, next) => {
          const answers = await next(params, token);
          if (!Array.isArray(answers)) {
            return answers;
          }
          return params.items.map((item, i) =>
            item.section === SECTION ? serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined) : answers[i]);
        },
      },
      // the server's code lens runs its effective-configuration command: show the answer
      executeCommand: async (command, args, next) => {
        const answer = await next(command, args);
        if (command === SERVER_EFFECTIVE_COMMAND) {
          await showEffective(effectiveDocuments, answer);
        }
        return answer;
      },
    },
  };
  const next = new LanguageClient(SECTION, 'sglang-lsp', serverOptions, clientOptions);
  next.onDidChangeState((e) => {
    if (client !== next) {
      return;
    }
    if (e.newState === State.Running) {
      status.set('running', info);
    } else if (e.newState === State.Stopped) {
      status.set('stopped', info);
    }
  });
  client = next;
  try {
    await next.start();
    status.set('running', info);
  } catch (err) {
    status.set('failed', info);
    log(`the server did not start: ${String(err)}`);
    const choice = await vscode.window.showErrorMessage(`sglang-lsp: the server (${file}) did not start: ${String(err)}`, 'Show Output');
    if (choice) {
      output.show();
    }
  }
}

async function stop(): Promise<void> {
  const old = client;
  client = undefined;
  if (!old) {
    return;
  }
  try {
    if (old.isRunning()) {
      await old.stop(5000);
    }
  } catch (err) {
    log(`stopping the server: ${String(err)}`);
  }
  try {
    await old.dispose(2000);
  } catch {
    // already stopped
  }
  const proc = serverProcess;
  serverProcess = undefined;
  if (proc && proc.exitCode === null && proc.signalCode === null) {
    // `exit` was sent; a server that did not go within 2 s is ended
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => { proc.kill(); resolve(); }, 2000);
      proc.once('exit', () => { clearTimeout(timer); resolve(); });
    });
  }
  status.set('stopped');
}

function restart(): Promise<void> {
  return serialized(async () => {
    await stop();
    await start();
  });
}

async function showEffectiveConfiguration(): Promise<void> {
  const current = client;
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('sglang-lsp: open a launch file and put the cursor on a launch.');
    return;
  }
  if (!current?.isRunning()) {
    void vscode.window.showErrorMessage('sglang-lsp: the language server is not running.', 'Show Output').then((c) => c && output.show());
    return;
  }
  const at = editor.selection.active;
  const answer = await current.sendRequest(ExecuteCommandRequest.type, {
    command: SERVER_EFFECTIVE_COMMAND,
    arguments: commandArguments(editor.document.uri.toString(), at.line, at.character),
  });
  await showEffective(effectiveDocuments, answer);
}

async function explain(documents: ExplanationDocuments, arg: unknown): Promise<void> {
  const current = client;
  if (!current?.isRunning()) {
    const choice = await vscode.window.showErrorMessage('sglang-lsp: the language server is not running, so it cannot explain a message.', 'Restart Server', 'Show Output');
    if (choice === 'Restart Server') {
      await restart();
    } else if (choice === 'Show Output') {
      output.show();
    }
    return;
  }
  const line = await askForLine(arg);
  if (line === undefined) {
    return;
  }
  const result = await current.sendRequest(ExecuteCommandRequest.type, { command: SERVER_EXPLAIN_COMMAND, arguments: [line] });
  if (!isExplanation(result)) {
    void vscode.window.showErrorMessage('sglang-lsp: the server gave no explanation (see the output).');
    return;
  }
  if (!result.matches.length) {
    void vscode.window.showInformationMessage(`sglang-lsp knows no rule for this message: ${line}`);
    return;
  }
  const uri = documents.add(render(result));
  try {
    await vscode.commands.executeCommand('markdown.showPreview', uri);
  } catch {
    await vscode.window.showTextDocument(uri, { preview: true });
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('sglang-lsp', { log: true });
  status = new StatusBar();
  const documents = new ExplanationDocuments();
  effectiveDocuments = new EffectiveDocuments();
  const ext = context.extension;
  context.subscriptions.push(
    output,
    status,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, documents),
    vscode.workspace.registerTextDocumentContentProvider(EFFECTIVE_SCHEME, effectiveDocuments),
    vscode.commands.registerCommand('sglang-lsp.showEffectiveConfiguration', () => showEffectiveConfiguration()),
    vscode.commands.registerCommand('sglang-lsp.restartServer', () => restart()),
    vscode.commands.registerCommand('sglang-lsp.showOutput', () => output.show()),
    vscode.commands.registerCommand('sglang-lsp.explain', (arg?: unknown) => explain(documents, arg)),
    vscode.commands.registerCommand('sglang-lsp.selectGpu', () =>
      pickSetting(ext, 'gpu', 'sglang-lsp: target GPU', 'not set (unknown GPU)')),
    vscode.commands.registerCommand('sglang-lsp.selectSglangVersion', () =>
      pickSetting(ext, 'sglangVersion', 'sglang-lsp: target sglang version', `the server's default${status.info.defaultSglang ? ` (${status.info.defaultSglang})` : ''}`)),
    vscode.commands.registerCommand('sglang-lsp.installServer', async () => {
      const exe = await installServer(output);
      if (!exe) {
        return;
      }
      const found = await search();
      if (found.found?.file !== exe) {
        // not where the search looks: remember it (the change of the setting restarts the server)
        await config().update('path', exe, writeTarget());
        log(`sglang-lsp.path set to ${exe}`);
      } else {
        await restart();
      }
    }),
    vscode.commands.registerCommand('sglang-lsp.statusMenu', async () => {
      const items: (vscode.QuickPickItem & { command: string })[] = [
        { label: '$(circuit-board) Target GPU', description: status.gpu() || 'not set', command: 'sglang-lsp.selectGpu' },
        { label: '$(versions) sglang version', description: status.sglangVersion() || `default${status.info.defaultSglang ? ` (${status.info.defaultSglang})` : ''}`, command: 'sglang-lsp.selectSglangVersion' },
        { label: '$(debug-restart) Restart Server', command: 'sglang-lsp.restartServer' },
        { label: '$(question) Explain an sglang Error Message…', command: 'sglang-lsp.explain' },
        { label: '$(list-tree) Show Effective Configuration', command: 'sglang-lsp.showEffectiveConfiguration' },
        { label: '$(output) Show Output', command: 'sglang-lsp.showOutput' },
      ];
      if (status.state === 'missing' || status.state === 'failed') {
        items.unshift({ label: '$(cloud-download) Install the Language Server with pip…', command: 'sglang-lsp.installServer' });
      }
      const picked = await vscode.window.showQuickPick(items, { title: 'sglang-lsp' });
      if (picked) {
        await vscode.commands.executeCommand(picked.command);
      }
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(SECTION)) {
        return;
      }
      status.update();
      if (e.affectsConfiguration(`${SECTION}.path`) || e.affectsConfiguration(`${SECTION}.logLevel`)) {
        void restart();
        return;
      }
      if (client?.isRunning() && SERVER_KEYS.some((key) => e.affectsConfiguration(`${SECTION}.${key}`))) {
        void client.sendNotification(DidChangeConfigurationNotification.type, { settings: { [SECTION]: serverSettings() } });
      }
    }),
  );
  await serialized(start);
}

export function deactivate(): Promise<void> {
  return serialized(stop);
}
