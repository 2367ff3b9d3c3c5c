// "Explain an sglang error message": a line of sglang's output goes to the server's
// `sglang-lsp.explainError` command (server/sglang_lsp/checks/explain.py, which `sglang-lsp
// explain` runs too); the rules that catch that mistake before launch, or a note on a start-up
// failure no rule predicts, are shown as a read-only Markdown document.

import * as vscode from 'vscode';

/** The command the server registers (`EXPLAIN_COMMAND` in server/sglang_lsp/lsp/server.py). */
export const SERVER_EXPLAIN_COMMAND = 'sglang-lsp.explainError';
export const SCHEME = 'sglang-lsp-explain';

interface OptionJson {
  name: string;
  type?: string | null;
  default?: unknown;
  choices?: unknown[] | null;
  deprecated?: boolean;
  replacement?: string | null;
  sglangVersion?: string;
}

interface Match {
  code: string;
  name: string;
  summary: string;
  severity: string;
  url?: string | null;
  doc?: string | null;
  what?: string;
  flag?: string | null;
  option?: OptionJson | null;
  kbId?: string | null;
  record?: Record<string, unknown>;
  says?: string[];
}

interface Note {
  id: string;
  title: string;
  what: string;
  flags: string[];
}

export interface Explanation {
  line: string;
  matches: Match[];
  notes?: Note[];
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** Markdown of an explanation (exported for the unit test). */
export function render(result: Explanation): string {
  const out: string[] = ['# sglang-lsp: what this message means', '', '```text', result.line, '```', ''];
  const notes = result.notes ?? [];
  for (const note of notes) {
    out.push(`## ${note.title}`, '', note.what, '', `Flags to look at: ${note.flags.map((f) => `\`${f}\``).join(', ')}`, '');
  }
  if (!result.matches.length) {
    if (!notes.length) {
      out.push('No rule of sglang-lsp matches this message.');
    }
    return out.join('\n');
  }
  result.matches.forEach((m, i) => {
    out.push(`## ${i === 0 ? '' : 'Also possible: '}${m.code} ${m.name} (${m.severity})`, '', m.summary, '');
    if (m.flag) {
      out.push(`Flag: \`${m.flag}\``);
    }
    for (const said of m.says ?? []) {
      out.push('', `sglang-lsp says: ${said}`);
    }
    if (m.option) {
      const o = m.option;
      const facts = [`type ${o.type ?? 'none'}`, `default \`${text(o.default)}\``];
      if (o.choices?.length) {
        facts.push(`choices ${o.choices.map((c) => `\`${text(c)}\``).join(', ')}`);
      }
      if (o.deprecated) {
        facts.push(`deprecated${o.replacement ? `, use \`${o.replacement}\`` : ''}`);
      }
      out.push(`\`${o.name}\` in sglang ${o.sglangVersion ?? ''}: ${facts.join('; ')}`);
    }
    if (m.url) {
      out.push('', `Rule documentation: ${m.url}`);
    }
    const record = m.record;
    if (record) {
      out.push('', `### Knowledge-base record ${m.kbId ?? ''}`.trimEnd(), '');
      for (const key of ['documentation', 'solutions', 'exampleFix', 'preventionTips']) {
        if (record[key] !== undefined) {
          out.push(`**${key}**`, '', text(record[key]), '');
        }
      }
    }
    if (m.doc) {
      // the rule's own documentation, its headings pushed below this one
      out.push('', m.doc.replace(/^(#+)/gm, '###$1'), '');
    }
    out.push('');
  });
  return out.join('\n');
}

export class ExplanationDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private count = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  add(markdown: string): vscode.Uri {
    this.count += 1;
    const uri = vscode.Uri.from({ scheme: SCHEME, path: `/explanation-${this.count}.md` });
    this.texts.set(uri.toString(), markdown);
    return uri;
  }
}

export function isExplanation(value: unknown): value is Explanation {
  return typeof value === 'object' && value !== null && Array.isArray((value as Explanation).matches);
}

/** The line to explain: the argument, else the selection's first line as a suggestion. */
export async function askForLine(arg: unknown): Promise<string | undefined> {
  if (typeof arg === 'string' && arg.trim()) {
    return arg;
  }
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection).split(/\r?\n/)[0] : '';
  const line = await vscode.window.showInputBox({
    title: 'sglang-lsp: explain an error message',
    prompt: "Paste a line of sglang's output, e.g. \"launch_server.py: error: unrecognized arguments: --max-model-len 4096\"",
    value: selected,
    ignoreFocusOut: true,
  });
  return line?.trim() ? line : undefined;
}
