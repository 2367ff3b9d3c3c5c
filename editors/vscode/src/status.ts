// The status-bar item: target GPU, sglang version and the server's state; a click opens a menu
// whose entries write the `sglang-lsp.gpu` / `sglang-lsp.sglangVersion` settings.

import * as vscode from 'vscode';
import { config, LANGUAGES, writeTarget } from './settings';

export type ServerState = 'starting' | 'running' | 'stopped' | 'missing' | 'failed';

const ICONS: Record<ServerState, string> = {
  starting: '$(loading~spin)',
  running: '$(pulse)',
  stopped: '$(circle-slash)',
  missing: '$(warning)',
  failed: '$(error)',
};

const STATE_TEXT: Record<ServerState, string> = {
  starting: 'starting',
  running: 'running',
  stopped: 'stopped',
  missing: 'not found (click for options)',
  failed: 'failed to start (see the output)',
};

export interface ServerInfo {
  file?: string;
  source?: string;
  version?: string;
  /** The sglang version the server checks against when `sglangVersion` is not set. */
  defaultSglang?: string;
}

interface Choice {
  value: string;
  description?: string;
}

/** The choices package.json declares for a setting (its `enum` and `enumDescriptions`). */
export function declaredChoices(extension: vscode.Extension<unknown>, key: string): Choice[] {
  const props = extension.packageJSON?.contributes?.configuration?.properties ?? {};
  const prop = props[`sglang-lsp.${key}`] ?? {};
  const values: unknown[] = Array.isArray(prop.enum) ? prop.enum : [];
  const descriptions: unknown[] = Array.isArray(prop.enumDescriptions) ? prop.enumDescriptions : [];
  return values.map((value, i) => ({
    value: String(value),
    description: typeof descriptions[i] === 'string' ? (descriptions[i] as string) : undefined,
  }));
}

export class StatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  state: ServerState = 'stopped';
  info: ServerInfo = {};
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor() {
    this.item = vscode.window.createStatusBarItem('sglang-lsp.status', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'sglang-lsp';
    this.item.command = 'sglang-lsp.statusMenu';
    this.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(() => this.update()));
    this.update();
  }

  set(state: ServerState, info?: ServerInfo): void {
    this.state = state;
    if (info) {
      this.info = info;
    }
    this.update();
  }

  gpu(): string {
    return config().get<string>('gpu', '').trim();
  }

  sglangVersion(): string {
    return config().get<string>('sglangVersion', '').trim();
  }

  update(): void {
    const gpu = this.gpu() || 'GPU ?';
    const version = this.sglangVersion() || this.info.defaultSglang || 'default';
    this.item.text = `${ICONS[this.state]} sglang ${version} · ${gpu}`;
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.appendMarkdown(`**sglang-lsp** — server ${STATE_TEXT[this.state]}\n\n`);
    tooltip.appendMarkdown(`Target GPU: ${this.gpu() || 'not set (GPU-dependent rules stay quiet)'}\n\n`);
    tooltip.appendMarkdown(`sglang version: ${this.sglangVersion() || `the server's default${this.info.defaultSglang ? ` (${this.info.defaultSglang})` : ''}`}\n\n`);
    if (this.info.file) {
      tooltip.appendMarkdown(`Server: \`${this.info.file}\`${this.info.version ? ` (${this.info.version})` : ''}, from ${this.info.source}\n\n`);
    }
    tooltip.appendMarkdown('Click to change the target or restart the server.');
    this.item.tooltip = tooltip;
    this.item.backgroundColor = this.state === 'missing' || this.state === 'failed'
      ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    const language = vscode.window.activeTextEditor?.document.languageId;
    const relevant = language !== undefined && (LANGUAGES as readonly string[]).includes(language);
    if (relevant || this.state === 'missing' || this.state === 'failed') {
      this.item.show();
    } else {
      this.item.hide();
    }
  }

  dispose(): void {
    this.item.dispose();
    this.subscriptions.forEach((s) => s.dispose());
  }
}

const OTHER = '$(edit) Other…';

/** A quick pick over a setting's declared choices plus free text; writes the setting. */
export async function pickSetting(
  extension: vscode.Extension<unknown>,
  key: 'gpu' | 'sglangVersion',
  title: string,
  unsetLabel: string,
): Promise<void> {
  const current = config().get<string>(key, '').trim();
  const items: (vscode.QuickPickItem & { value?: string })[] = declaredChoices(extension, key).map((c) => ({
    label: c.value === '' ? unsetLabel : c.value,
    description: (c.value === current ? '$(check) current · ' : '') + (c.description ?? ''),
    value: c.value,
  }));
  items.push({ label: OTHER, description: 'type a name' });
  const picked = await vscode.window.showQuickPick(items, { title, placeHolder: `now: ${current || unsetLabel}` });
  if (!picked) {
    return;
  }
  let value = picked.value;
  if (value === undefined) {
    value = await vscode.window.showInputBox({ title, value: current });
    if (value === undefined) {
      return;
    }
  }
  await config().update(key, value.trim(), writeTarget());
}
