// "Show effective configuration": what sglang will actually run a launch with. The server's
// `sglang-lsp.effectiveConfiguration` command (server/sglang_lsp/lsp/features/effective.py)
// answers with the text and JSON of `sglang-lsp resolve` for the launch under the cursor; it is
// shown in a read-only document. The server's code lens runs the same command: the client's
// middleware shows its answer too.

import * as vscode from 'vscode';

/** The command the server registers (`EFFECTIVE_COMMAND` in lsp/features/effective.py). */
export const SERVER_EFFECTIVE_COMMAND = 'sglang-lsp.effectiveConfiguration';
export const EFFECTIVE_SCHEME = 'sglang-lsp-effective';

export interface EffectiveConfiguration {
  uri: string;
  text: string;
  launches: unknown[];
}

export function isEffectiveConfiguration(value: unknown): value is EffectiveConfiguration {
  return typeof value === 'object' && value !== null
    && typeof (value as EffectiveConfiguration).text === 'string'
    && Array.isArray((value as EffectiveConfiguration).launches);
}

/** The arguments of the server command for a document and a cursor (0-based line/character). */
export function commandArguments(uri: string, line: number, character: number): unknown[] {
  return [uri, { line, character }];
}

/** The name the effective-configuration document is shown under: `<file> (effective)`. */
export function documentName(uri: string, count: number): string {
  const base = uri.split('/').pop() || 'launch';
  return `/${count}/${decodeURIComponent(base)} (effective)`;
}

export class EffectiveDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private count = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  add(answer: EffectiveConfiguration): vscode.Uri {
    this.count += 1;
    const uri = vscode.Uri.from({ scheme: EFFECTIVE_SCHEME, path: documentName(answer.uri, this.count) });
    this.texts.set(uri.toString(), answer.text);
    return uri;
  }
}

/** Open the server's answer beside the launch file. */
export async function showEffective(documents: EffectiveDocuments, answer: unknown): Promise<void> {
  if (!isEffectiveConfiguration(answer)) {
    void vscode.window.showErrorMessage('sglang-lsp: the server gave no effective configuration (see the output).');
    return;
  }
  const doc = await vscode.workspace.openTextDocument(documents.add(answer));
  await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
}
