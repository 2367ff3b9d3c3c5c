// End-to-end test of the extension in a real VS Code: code-server with the .vsix installed,
// driven headless by Playwright in Debian's Chromium. Run by .ci/e2e-vscode, which installs
// everything; by hand:
//
//   CODE_SERVER=/path/to/code-server SGLANG_LSP_BIN=/path/to/venv/bin/sglang-lsp \
//     node --test e2e/            (from editors/vscode, after `npm run package`)
//
// Environment:
//   CODE_SERVER      code-server executable (4.139.1; needs Node 24 first on PATH)   [required]
//   SGLANG_LSP_BIN   the sglang-lsp executable the extension must start             [required]
//   VSIX             the extension package (default: editors/vscode/sglang-lsp.vsix)
//   CHROMIUM         browser executable (default: /usr/bin/chromium)
//   E2E_ARTIFACTS    where screenshots go (default: a new temporary directory); printed at the end
//   E2E_KEEP         set to keep the temporary workspace and profile (their path is printed)
//   E2E_PYTHON       the python3 offered for the pip install (default: the one behind
//                    SGLANG_LSP_BIN's virtualenv)
//
// What it checks, as a user would see it: diagnostics of a launch script, a Kubernetes
// manifest and a compose file in the Problems panel; the hover on a flag; a quick fix applied through the
// light-bulb menu in each file, and the file text on disk after saving; a Markdown doc's code
// block checked (its diagnostic on the flag's column, its quick fix); the status-bar item
// (GPU and sglang version) and its menu writing the `sglang-lsp.gpu` setting; the "explain an
// error message" command; a wrong `sglang-lsp.path` reported, and the offered pip install (into
// a new .venv of the workspace) bringing the server back.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const extensionDir = path.dirname(here);

const CODE_SERVER = process.env.CODE_SERVER;
const SGLANG_LSP_BIN = process.env.SGLANG_LSP_BIN;
const VSIX = process.env.VSIX || path.join(extensionDir, 'sglang-lsp.vsix');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const WAIT = 90_000; // the longest wait for one thing to appear (a loaded 2-core machine)
const INSTALL_WAIT = 600_000; // pip install of this checkout into a new virtualenv
const REPO = path.resolve(extensionDir, '..', '..');

const FIXED_LAUNCH = fs.readFileSync(path.join(here, 'workspace', 'launch.sh'), 'utf8')
  .replace('--mem-fraction-statc', '--mem-fraction-static');
const FIXED_MANIFEST = fs.readFileSync(path.join(here, 'workspace', 'deployment.yaml'), 'utf8')
  .replace('- FP8', '- fp8');
const GUIDE = fs.readFileSync(path.join(here, 'workspace', 'guide.md'), 'utf8');
const FIXED_GUIDE = GUIDE.replace('--quantization FP8', '--quantization fp8');
// where `FP8` of the guide's code block is (1-based line and column, as the Problems panel shows)
const GUIDE_LINE = GUIDE.split('\n').findIndex((l) => l.includes('--quantization FP8')) + 1;
const GUIDE_COL = GUIDE.split('\n')[GUIDE_LINE - 1].indexOf('FP8') + 1;

let tmp;
let artifacts;
let workspace;
let userData;
let serverProcess;
let serverLog = '';
let browser;
let page;

function need(name, value, what) {
  if (!value) {
    throw new Error(`${name} is not set: ${what}`);
  }
  if (!fs.existsSync(value)) {
    throw new Error(`${name}=${value} does not exist: ${what}`);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await new Promise((resolve) => {
      const req = http.get(url, (res) => {
        res.resume();
        resolve(res.statusCode !== undefined && res.statusCode < 500);
      });
      req.on('error', () => resolve(false));
      req.setTimeout(2000, () => req.destroy());
    });
    if (ok) {
      return;
    }
    if (serverProcess.exitCode !== null) {
      throw new Error(`code-server exited with ${serverProcess.exitCode}:\n${serverLog}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`code-server did not answer at ${url} within ${ms / 1000} s:\n${serverLog}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Files under the profile's logs whose name mentions sglang-lsp (the output channel). */
function extensionLogs() {
  const out = [];
  const walk = (dir) => {
    for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(file);
      } else if (/sglang-lsp/i.test(entry.name) || entry.name === 'exthost.log') {
        out.push(file);
      }
    }
  };
  walk(path.join(userData, 'logs'));
  return out;
}

async function screenshot(name) {
  const file = path.join(artifacts, name);
  await page.screenshot({ path: file });
  return file;
}

// --- VS Code helpers (keyboard and the command palette, as a user would) -------------------

const quickInput = () => page.locator('.quick-input-widget');

async function runCommand(label, { exact = true } = {}) {
  await page.keyboard.press('F1');
  const input = quickInput().locator('input');
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.fill(`>${label}`);
  const row = quickInput().locator('.monaco-list-row', { hasText: label }).first();
  await row.waitFor({ state: 'visible', timeout: WAIT });
  if (exact) {
    assert.match(await row.innerText(), new RegExp(label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  }
  await row.click();
}

async function openFile(name) {
  await page.keyboard.press('Control+P');
  const input = quickInput().locator('input');
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.fill(name);
  const row = quickInput().locator('.monaco-list-row', { hasText: name }).first();
  await row.waitFor({ state: 'visible', timeout: WAIT });
  await row.click();
  await page.locator('.tabs-container .tab.active', { hasText: name }).waitFor({ state: 'visible', timeout: WAIT });
  // the editor has the focus once its text area does
  await page.locator('.editor-instance .monaco-editor textarea').first().waitFor({ state: 'attached', timeout: WAIT });
}

/** Move the cursor (Go to Line/Column; 1-based, as the status bar shows). */
async function goTo(line, column) {
  await page.keyboard.press('Control+G');
  const input = quickInput().locator('input');
  await input.waitFor({ state: 'visible', timeout: WAIT });
  await input.fill(`:${line}:${column}`);
  await page.keyboard.press('Enter');
  await page.locator('.statusbar-item', { hasText: `Ln ${line}, Col ${column}` }).waitFor({ state: 'visible', timeout: WAIT });
}

async function problemsText() {
  return (await page.locator('.markers-panel').first().innerText().catch(() => '')) ?? '';
}

async function waitForProblems(predicate, what) {
  const deadline = Date.now() + WAIT;
  let text = '';
  while (Date.now() < deadline) {
    text = await problemsText();
    if (predicate(text)) {
      return text;
    }
    await page.waitForTimeout(250);
  }
  await screenshot('failure-problems.png');
  throw new Error(`the Problems panel never showed ${what}; it showed:\n${text}`);
}

async function applyQuickFix(title) {
  await runCommand('Quick Fix...', { exact: false });
  const item = page.locator('.action-widget .monaco-list-row', { hasText: title }).first();
  await item.waitFor({ state: 'visible', timeout: WAIT });
  await item.click();
}

async function saveAndRead(file, expected) {
  // The quick fix's edit reaches the buffer asynchronously: a save pressed before it lands
  // writes the old text and leaves the buffer dirty, so save again until the file is expected
  // (or the time is up; the caller's assertion then shows the difference).
  const deadline = Date.now() + WAIT;
  let text = '';
  let lastSave = 0;
  while (Date.now() < deadline) {
    if (Date.now() - lastSave > 1000) {
      await page.keyboard.press('Control+S');
      lastSave = Date.now();
    }
    text = fs.readFileSync(file, 'utf8');
    if (text === expected) {
      return text;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return text;
}

// --- setup ----------------------------------------------------------------------------------

before(async () => {
  need('CODE_SERVER', CODE_SERVER, 'the code-server executable (see .ci/e2e-vscode)');
  need('SGLANG_LSP_BIN', SGLANG_LSP_BIN, 'the sglang-lsp executable of this checkout');
  need('VSIX', VSIX, 'build it first: npm run package');
  need('CHROMIUM', CHROMIUM, 'Debian: apt-get install chromium');

  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sglang-lsp-vscode-e2e.'));
  artifacts = process.env.E2E_ARTIFACTS || path.join(tmp, 'artifacts');
  fs.mkdirSync(artifacts, { recursive: true });
  workspace = path.join(tmp, 'workspace');
  fs.cpSync(path.join(here, 'workspace'), workspace, { recursive: true });
  userData = path.join(tmp, 'user-data');
  const extensions = path.join(tmp, 'extensions');
  const home = path.join(tmp, 'home');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  // sglang-lsp.path is a machine setting: a remote window (code-server's is one) reads it from
  // the remote's settings (Machine/), not from the user's
  fs.mkdirSync(path.join(userData, 'Machine'), { recursive: true });
  fs.writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify({
    'sglang-lsp.path': SGLANG_LSP_BIN,
  }, null, 2));
  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
    'sglang-lsp.gpu': 'H100',
    'sglang-lsp.logLevel': 'debug',
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'chat.disableAIFeatures': true,
    'git.enabled': false,
    'editor.minimap.enabled': false,
    'editor.hover.delay': 200,
    'files.autoSave': 'off',
  }, null, 2));
  // `python3` on the PATH of code-server (and so of the extension, which offers it for the
  // install): the interpreter behind the given server's virtualenv (a pyenv shim, say, would not
  // work with the temporary HOME)
  const python = process.env.E2E_PYTHON || fs.realpathSync(path.join(path.dirname(SGLANG_LSP_BIN), 'python3'));
  fs.mkdirSync(path.join(tmp, 'bin'));
  fs.symlinkSync(python, path.join(tmp, 'bin', 'python3'));
  const env = {
    ...process.env,
    PATH: `${path.join(tmp, 'bin')}${path.delimiter}${process.env.PATH}`,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
  };
  const common = ['--user-data-dir', userData, '--extensions-dir', extensions];

  const installed = execFileSync(CODE_SERVER, [...common, '--install-extension', VSIX], { env, encoding: 'utf8', timeout: 180_000 });
  console.log(installed.trim());
  const listed = execFileSync(CODE_SERVER, [...common, '--list-extensions', '--show-versions'], { env, encoding: 'utf8', timeout: 120_000 });
  assert.match(listed, /sglang-lsp\.sglang-lsp@0\.1\.0/, `the .vsix is not installed:\n${listed}`);

  const port = await freePort();
  serverProcess = spawn(CODE_SERVER, [
    ...common,
    '--bind-addr', `127.0.0.1:${port}`,
    '--auth', 'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--ignore-last-opened',
    '--config', path.join(tmp, 'code-server.yaml'),
    workspace,
  ], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const keep = (chunk) => { serverLog = (serverLog + chunk.toString()).slice(-20_000); };
  serverProcess.stdout.on('data', keep);
  serverProcess.stderr.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`, 120_000);

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    env, // its profile and crash-report folders go to the temporary home, too
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(WAIT);
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator('.monaco-workbench .part.editor').waitFor({ state: 'visible', timeout: 180_000 });
  await page.locator('.monaco-workbench .part.sidebar, .monaco-workbench .part.statusbar').first().waitFor({ state: 'visible' });
});

after(async () => {
  try {
    if (page && process.exitCode) {
      await screenshot('failure.png').catch(() => undefined);
    }
    await browser?.close();
  } finally {
    if (serverProcess && serverProcess.exitCode === null) {
      try {
        process.kill(-serverProcess.pid, 'SIGTERM'); // code-server and the processes it started
      } catch {
        serverProcess.kill('SIGTERM');
      }
    }
    if (tmp && !process.env.E2E_KEEP && !artifacts.startsWith(tmp)) {
      fs.rmSync(tmp, { recursive: true, force: true });
    } else if (tmp) {
      console.log(`kept: ${tmp}`);
    }
    console.log(`screenshots: ${artifacts}`);
  }
});

/** On a failure: the extension's output channel and code-server's log, printed and saved
 * beside the screenshots. */
function dumpLogs() {
  for (const file of extensionLogs()) {
    const text = fs.readFileSync(file, 'utf8');
    console.log(`--- ${file}\n${text.slice(-6000)}`);
    fs.writeFileSync(path.join(artifacts, `failure-${path.basename(file)}`), text);
  }
  console.log(`--- code-server\n${serverLog.slice(-4000)}`);
  fs.writeFileSync(path.join(artifacts, 'failure-code-server.log'), serverLog);
}

// --- the test -------------------------------------------------------------------------------

async function step(name, fn) {
  const started = Date.now();
  await fn();
  console.log(`ok: ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

test('sglang-lsp in code-server: diagnostics, hover, quick fixes, status bar, explain', async () => {
  try {
    await step('diagnostics of the launch script, the manifest and the compose file reach the Problems panel', async () => {
      await openFile('launch.sh');
      await openFile('compose.yaml');
      // a compose file has its own language id (dockercompose), which the extension covers too
      await page.locator('.statusbar-item', { hasText: /^Compose$/ }).first().waitFor({ state: 'visible', timeout: WAIT });
      await openFile('deployment.yaml');
      await runCommand('View: Focus Problems (Errors, Warnings, Infos)', { exact: false });
      const text = await waitForProblems(
        (s) => s.includes('--mem-fraction-statc') && s.includes('FP8') && s.includes('--max-model-len'),
        'the problems of the three files');
      assert.match(text, /sglang 0\.5\.23 has no flag `--mem-fraction-statc`; did you mean `--mem-fraction-static`\?/);
      assert.match(text, /`FP8` is not a valid choice for `--quantization`; did you mean `fp8`\?/);
      assert.match(text, /sglang-lsp/); // the diagnostics' source
      assert.match(text, /SGL001/);
      assert.match(text, /SGL002/);
      assert.match(text, /\[Ln 5, Col 3\]/); // on the flag, not on the line
      assert.match(text, /\[Ln 23, Col 15\]/);
      assert.match(text, /`--max-model-len` is a vLLM flag; sglang's nearest equivalent is `--context-length`/);
      assert.match(text, /\[Ln 6, Col 84\]/);
      console.log(`problems: ${await screenshot('problems.png')}`);
    });

    await step('the status bar shows the target GPU and sglang version', async () => {
      const item = page.locator('.statusbar-item', { hasText: 'sglang 0.5.23' }).first();
      await item.waitFor({ state: 'visible', timeout: WAIT });
      assert.match(await item.innerText(), /sglang 0\.5\.23 · H100/);
    });

    await step('hover on a flag explains it', async () => {
      await openFile('launch.sh');
      await goTo(6, 6); // inside `--port`
      await runCommand('Show or Focus Hover', { exact: false });
      const hover = page.locator('.monaco-hover:visible, .monaco-resizable-hover:visible').first();
      await hover.waitFor({ state: 'visible', timeout: WAIT });
      await page.waitForFunction(() => /--port/.test(document.querySelector('.monaco-hover')?.textContent ?? ''), null, { timeout: WAIT });
      const text = await hover.innerText();
      assert.match(text, /--port/);
      assert.match(text, /30000/);
      console.log(`hover: ${await screenshot('hover.png')}`);
      await page.keyboard.press('Escape');
    });

    await step('quick fix in the launch script', async () => {
      await goTo(5, 6); // inside `--mem-fraction-statc`
      await applyQuickFix('Use `--mem-fraction-static`');
      const text = await saveAndRead(path.join(workspace, 'launch.sh'), FIXED_LAUNCH);
      assert.equal(text, FIXED_LAUNCH);
    });

    await step('quick fix in the Kubernetes manifest', async () => {
      await openFile('deployment.yaml');
      await goTo(23, 16); // inside `FP8`
      await applyQuickFix('Use `fp8`');
      const text = await saveAndRead(path.join(workspace, 'deployment.yaml'), FIXED_MANIFEST);
      assert.equal(text, FIXED_MANIFEST);
      await waitForProblems((s) => !s.includes('--mem-fraction-statc') && !s.includes('FP8'), 'no problems after the fixes');
      console.log(`after the fixes: ${await screenshot('after-fix.png')}`);
    });

    await step('a Markdown doc: its shell code block is checked, and fixed', async () => {
      await openFile('guide.md');
      await runCommand('View: Focus Problems (Errors, Warnings, Infos)', { exact: false });
      const text = await waitForProblems((s) => s.includes('FP8') && s.includes('guide.md'), 'the Markdown guide\'s problem');
      assert.match(text, /`FP8` is not a valid choice for `--quantization`; did you mean `fp8`\?/);
      assert.match(text, new RegExp(`\\[Ln ${GUIDE_LINE}, Col ${GUIDE_COL}\\]`));
      await openFile('guide.md');
      await goTo(GUIDE_LINE, GUIDE_COL + 1); // inside `FP8`
      await applyQuickFix('Use `fp8`');
      const saved = await saveAndRead(path.join(workspace, 'guide.md'), FIXED_GUIDE);
      assert.equal(saved, FIXED_GUIDE);
      await waitForProblems((s) => !s.includes('FP8'), 'no problem in the guide after the fix');
      console.log(`markdown: ${await screenshot('markdown.png')}`);
    });

    await step('the status-bar menu writes the target GPU setting', async () => {
      await page.locator('.statusbar-item', { hasText: 'sglang 0.5.23' }).first().click();
      await quickInput().locator('.monaco-list-row', { hasText: 'Target GPU' }).first().click();
      await quickInput().locator('.monaco-list-row', { hasText: 'B200' }).first().click();
      const settings = path.join(workspace, '.vscode', 'settings.json');
      const deadline = Date.now() + WAIT;
      while (Date.now() < deadline && !(fs.existsSync(settings) && fs.readFileSync(settings, 'utf8').includes('B200'))) {
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(JSON.parse(fs.readFileSync(settings, 'utf8'))['sglang-lsp.gpu'], 'B200');
      await page.locator('.statusbar-item', { hasText: 'sglang 0.5.23 · B200' }).first().waitFor({ state: 'visible', timeout: WAIT });
    });

    await step('explain an error message', async () => {
      await runCommand('sglang-lsp: Explain an sglang Error Message…');
      const input = quickInput().locator('input');
      await input.waitFor({ state: 'visible', timeout: WAIT });
      await input.fill('launch_server.py: error: unrecognized arguments: --max-model-len 4096');
      await page.keyboard.press('Enter');
      await page.locator('.tabs-container .tab', { hasText: 'explanation-1' }).first().waitFor({ state: 'visible', timeout: WAIT });
      // the Markdown preview is a webview: look for the rendered text in the page's frames
      const deadline = Date.now() + WAIT;
      let rendered = '';
      while (!rendered && Date.now() < deadline) {
        for (const frame of page.frames()) {
          const text = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
          if (text.includes('SGL001') && text.includes('what this message means')) {
            rendered = text;
            break;
          }
        }
        if (!rendered) {
          await page.waitForTimeout(250);
        }
      }
      assert.ok(rendered, 'the explanation was never rendered in the Markdown preview');
      assert.match(rendered, /unrecognized arguments: --max-model-len 4096/);
      console.log(`explanation: ${await screenshot('explain.png')}`);
    });

    await step('a wrong sglang-lsp.path is reported, and the offered pip install into a new .venv works', async () => {
      const settings = path.join(workspace, '.vscode', 'settings.json');
      const before = JSON.parse(fs.readFileSync(settings, 'utf8'));
      fs.writeFileSync(settings, JSON.stringify({ ...before, 'sglang-lsp.path': '/nonexistent/sglang-lsp' }, null, 2));
      const toast = page.locator('.notification-toast', { hasText: 'sglang-lsp.path is set to "/nonexistent/sglang-lsp"' }).first();
      await toast.waitFor({ state: 'visible', timeout: WAIT });
      const install = toast.locator('.monaco-button', { hasText: 'Install with pip' }).first();
      await install.waitFor({ state: 'visible', timeout: WAIT });
      await page.locator('.statusbar-item', { hasText: 'sglang' }).locator('.codicon-warning').first()
        .waitFor({ state: 'visible', timeout: WAIT });
      console.log(`missing server: ${await screenshot('missing-server.png')}`);

      // the offer: a new virtualenv in the workspace, this checkout installed into it
      await install.click();
      const venv = path.join(workspace, '.venv');
      const create = quickInput().locator('.monaco-list-row', { hasText: `Create ${venv}` }).first();
      await create.waitFor({ state: 'visible', timeout: WAIT });
      await create.click();
      await quickInput().locator('.quick-input-title', { hasText: 'what to install' }).waitFor({ state: 'visible', timeout: WAIT });
      await quickInput().locator('input').fill(REPO);
      await page.keyboard.press('Enter');
      const installed = path.join(venv, 'bin', 'sglang-lsp');
      const deadline = Date.now() + INSTALL_WAIT;
      const configured = () => JSON.parse(fs.readFileSync(settings, 'utf8'))['sglang-lsp.path'];
      while (Date.now() < deadline && configured() !== installed) {
        await new Promise((r) => setTimeout(r, 500));
      }
      // not found by the search (the workspace setting still named the missing file): remembered
      assert.equal(configured(), installed, 'the installed server was not written to sglang-lsp.path');
      assert.ok(fs.existsSync(installed));
      await openFile('compose.yaml'); // the item shows for shell and YAML files (or a missing server)
      await page.locator('.statusbar-item', { hasText: 'sglang' }).locator('.codicon-pulse').first()
        .waitFor({ state: 'visible', timeout: WAIT });
      await runCommand('View: Focus Problems (Errors, Warnings, Infos)', { exact: false });
      await waitForProblems((s) => s.includes('--max-model-len'), 'the compose file\'s problem from the installed server');
      const log = extensionLogs().filter((f) => /sglang-lsp\.log$/.test(f)).map((f) => fs.readFileSync(f, 'utf8')).join('\n');
      assert.match(log, new RegExp(`using ${installed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(setting sglang-lsp\\.path\\)`));
      console.log(`installed server: ${await screenshot('installed-server.png')}`);
    });
  } catch (err) {
    await screenshot('failure.png').catch(() => undefined);
    dumpLogs();
    throw err;
  }
});
