import './register';
import { beforeEach, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from './vscode';
import { Controller, LspClient, RunResult, workspaceUsesVisa } from '../../src/controller';
import { ServerSettings } from '../../src/settings';
import { Env } from '../../src/discovery';

const env = (): Env => ({ platform: 'linux', PATH: '/usr/bin', home: '/home/k', workspaceFolder: '/ws' });
const exes = (...e: string[]) => ({ isExecutable: (p: string) => e.includes(p) });
const flush = () => new Promise((r) => setImmediate(r));

class FakeClient implements LspClient {
  started = 0;
  stopped = 0;
  notes: [string, unknown][] = [];
  constructor(
    readonly path: string,
    readonly init: ServerSettings,
    private readonly fail?: string,
  ) {}
  async start() {
    this.started++;
    if (this.fail === EXITS_SILENTLY) return;
    if (this.fail) throw new Error(this.fail);
  }
  isRunning() {
    return this.started > 0 && !this.fail;
  }
  async stop() {
    this.stopped++;
  }
  async sendNotification(method: string, params: unknown) {
    this.notes.push([method, params]);
  }
}

/** A server that exits before answering initialize, which vscode-languageclient 9 can report
 * by resolving start() (its close handler drops the start promise) rather than rejecting it. */
const EXITS_SILENTLY = 'exits silently';

const COST_HELP = 'Usage: visa-lint cost [OPTIONS] <FILE>\n';
const OLD_HELP = 'Usage: visa-lint [OPTIONS] [PATHS]...\n       visa-lint <COMMAND>\n';

function setup(opts: { exes?: string[]; fail?: string; help?: string; run?: (cmd: string, args: string[]) => RunResult } = {}) {
  const clients: FakeClient[] = [];
  const runs: [string, string[]][] = [];
  const helps: string[] = [];
  const output = vscode.window.createOutputChannel('visa-lint');
  const ctl = new Controller(
    '/ext',
    output as never,
    (p, init) => {
      const c = new FakeClient(p, init, opts.fail);
      clients.push(c);
      return c;
    },
    async (cmd, args) => {
      if (args[1] === '--help') {
        helps.push(cmd);
        return { code: 0, stdout: opts.help ?? COST_HELP, stderr: '' };
      }
      runs.push([cmd, args]);
      return opts.run ? opts.run(cmd, args) : { code: 0, stdout: '{"kernels":[]}', stderr: '' };
    },
    exes(...(opts.exes ?? ['/ext/server/visa-lsp'])),
    env,
  );
  return { ctl, clients, runs, helps };
}

const change = (...keys: string[]) => ({
  affectsConfiguration: (s: string) => keys.some((k) => k === s || k.startsWith(`${s}.`)),
});

beforeEach(() => vscode.reset());

test('no server anywhere: an error notification with the remedy; "Open Settings" opens the setting', async () => {
  vscode.state.pick = 'Open Settings';
  const { ctl, clients } = setup({ exes: [] });
  assert.equal(await ctl.start(), false);
  assert.equal(clients.length, 0);
  assert.equal(vscode.state.shown.length, 1);
  const n = vscode.state.shown[0];
  assert.equal(n.kind, 'error');
  assert.match(n.message, /cargo install --path server/);
  assert.deepEqual(n.items, ['Open Settings', 'Show Output']);
  await flush();
  assert.deepEqual(vscode.state.executed, [['workbench.action.openSettings', 'visa-lint.server.path']]);
  assert.ok(vscode.state.output.some((l) => l.includes('/ext/server/visa-lsp')));
});

test('a server that fails to start: the reason and the remedy, "Show Output" shows the channel', async () => {
  vscode.state.pick = 'Show Output';
  const { ctl, clients } = setup({ fail: 'spawn EACCES' });
  assert.equal(await ctl.start(), false);
  assert.equal(clients[0].stopped, 1);
  assert.match(vscode.state.shown[0].message, /\/ext\/server\/visa-lsp failed to start: spawn EACCES/);
  assert.match(vscode.state.shown[0].message, /visa-lint\.server\.path/);
  await flush();
  assert.equal(vscode.state.outputShown, 1);
  assert.equal(ctl.client, undefined);
});

test('a server that exits before answering initialize is a failed start, even when start() resolves', async () => {
  const { ctl, clients } = setup({ fail: EXITS_SILENTLY });
  assert.equal(await ctl.start(), false);
  assert.equal(clients[0].stopped, 1);
  assert.match(vscode.state.shown[0].message, /visa-lsp failed to start: it exited before answering the initialize request/);
  assert.equal(ctl.client, undefined);
});

test('the server gets the settings at start and on change; a removed rule restarts it', async () => {
  vscode.state.config = { 'server.path': '', rules: { 'CAP-003': 'allow' }, perfSeverity: 'information' };
  const { ctl, clients } = setup();
  assert.equal(await ctl.start(), true);
  assert.equal(clients[0].path, '/ext/server/visa-lsp');
  assert.deepEqual(clients[0].init, { rules: { 'CAP-003': 'allow' }, perfSeverity: 'information' });

  vscode.state.config = { ...vscode.state.config, perfSeverity: 'hint', rules: { 'CAP-003': 'allow', BNK: 'deny' } };
  await ctl.configurationChanged(change('visa-lint.perfSeverity') as never);
  assert.deepEqual(clients[0].notes, [
    ['workspace/didChangeConfiguration', { settings: { rules: { 'CAP-003': 'allow', BNK: 'deny' }, perfSeverity: 'hint' } }],
  ]);
  // Unchanged: nothing sent. Another extension's setting: ignored.
  await ctl.configurationChanged(change('visa-lint.statusBar') as never);
  await ctl.configurationChanged(change('rust-analyzer.check') as never);
  assert.equal(clients[0].notes.length, 1);

  vscode.state.config = { ...vscode.state.config, rules: { BNK: 'deny' } };
  await ctl.configurationChanged(change('visa-lint.rules') as never);
  assert.equal(clients.length, 2);
  assert.equal(clients[0].stopped, 1);
  assert.deepEqual(clients[1].init, { rules: { BNK: 'deny' }, perfSeverity: 'hint' });
  assert.equal(ctl.client, clients[1]);
});

test('a new server path restarts on the new binary; restart is stop then start', async () => {
  const { ctl, clients } = setup({ exes: ['/ext/server/visa-lsp', '/opt/visa-lsp'] });
  await ctl.start();
  vscode.state.config = { 'server.path': '/opt/visa-lsp' };
  await ctl.configurationChanged(change('visa-lint.server.path') as never);
  assert.deepEqual(clients.map((c) => [c.path, c.started, c.stopped]), [
    ['/ext/server/visa-lsp', 1, 1],
    ['/opt/visa-lsp', 1, 0],
  ]);
  assert.equal(await ctl.restart(), true);
  assert.equal(clients[1].stopped, 1);
  assert.equal(clients.length, 3);
});

function editor(file: string, text: string, line: number, dirty = false) {
  const document = {
    uri: { scheme: 'file', fsPath: file, path: file, toString: () => `file://${file}` },
    isDirty: dirty,
    version: 1,
    languageId: 'rust',
    getText: () => text,
  };
  return { document, selection: { active: { line } } };
}

const REPORT = JSON.stringify({
  kernels: [
    { name: 'load', line: 4, total_cycles: 66036, bottleneck: 'DMA', hints: [] },
    { name: 'store', line: 20, total_cycles: 512, bottleneck: 'Commit Engine', hints: [] },
  ],
});

test('Show kernel timeline: runs `visa-lint cost` with --timeline and shows the kernel under the cursor', async () => {
  const { ctl, runs } = setup({
    exes: ['/ext/server/visa-lsp', '/ext/server/visa-lint'],
    run: (_cmd, args) => {
      fs.writeFileSync(args[args.indexOf('--timeline') + 1], '<svg><g class="kernel" data-name="store"></g></svg>');
      return { code: 0, stdout: REPORT, stderr: '' };
    },
  });
  await ctl.start();
  vscode.window.activeTextEditor = editor('/ws/k.rs', 'use furiosa_visa_std::prelude::*;', 25);
  await ctl.showTimeline();
  assert.equal(runs.length, 1);
  assert.equal(runs[0][0], '/ext/server/visa-lint');
  assert.deepEqual(runs[0][1].slice(0, 4), ['cost', '/ws/k.rs', '--format', 'json']);
  const panel = vscode.state.panels[0];
  assert.equal(panel.title, 'Timeline: store');
  assert.ok(panel.webview.html.includes('<svg><g class="kernel" data-name="store">'));
  assert.ok(panel.webview.html.includes('store: 512 cycles'));
  ctl.dispose();
});

test('an unsaved buffer is costed from a copy of its text', async () => {
  let seen = '';
  const { ctl } = setup({
    exes: ['/ext/server/visa-lsp', '/ext/server/visa-lint'],
    run: (_cmd, args) => {
      seen = fs.readFileSync(args[1], 'utf8');
      return { code: 0, stdout: REPORT, stderr: '' };
    },
  });
  const ed = editor('/ws/k.rs', 'use furiosa_visa_std::prelude::*; // edited', 2, true);
  await ctl.cost(ed.document as never);
  assert.equal(seen, 'use furiosa_visa_std::prelude::*; // edited');
  ctl.dispose();
});

test('the status bar shows the cycles of the kernel under the cursor', async () => {
  const { ctl, runs } = setup({
    exes: ['/ext/server/visa-lsp', '/ext/server/visa-lint'],
    run: () => ({ code: 0, stdout: REPORT, stderr: '' }),
  });
  const item = vscode.state.statusItems[0];
  vscode.window.activeTextEditor = editor('/ws/k.rs', 'use furiosa_visa_std::prelude::*;', 5);
  await ctl.updateStatus();
  assert.equal(item.visible, true);
  assert.equal(item.text, '$(pulse) load: 66,036 cycles');
  assert.match(String(item.tooltip), /bottleneck: DMA/);
  // Moving the cursor reuses the report of this version.
  (vscode.window.activeTextEditor as { selection: unknown }).selection = { active: { line: 30 } };
  await ctl.updateStatus();
  assert.equal(item.text, '$(pulse) store: 512 cycles');
  assert.equal(runs.length, 1);
  // A plain Rust file: hidden.
  vscode.window.activeTextEditor = editor('/ws/main.rs', 'fn main() {}', 0);
  await ctl.updateStatus();
  assert.equal(item.visible, false);
  ctl.dispose();
});

test('a CLI without `cost`: the status bar hides, says so once, and the timeline says to update', async () => {
  // Such a CLI would take `cost` for a path: it must never be run on the file.
  const { ctl, runs, helps } = setup({ exes: ['/ext/server/visa-lsp', '/ext/server/visa-lint'], help: OLD_HELP });
  vscode.window.activeTextEditor = editor('/ws/k.rs', 'use furiosa_visa_std::prelude::*;', 5);
  await ctl.updateStatus();
  await ctl.updateStatus();
  assert.equal(vscode.state.statusItems[0].visible, false);
  assert.equal(vscode.state.output.filter((l) => l.includes('has no `cost` subcommand')).length, 1);
  await ctl.showTimeline();
  assert.match(vscode.state.shown[0].message, /has no `cost` subcommand: update visa-lint/);
  assert.equal(vscode.state.panels.length, 0);
  assert.deepEqual(runs, []);
  assert.deepEqual(helps, ['/ext/server/visa-lint']); // asked once
  ctl.dispose();
});

test('a failing `visa-lint cost` is reported with its stderr', async () => {
  const { ctl } = setup({
    exes: ['/ext/server/visa-lsp', '/ext/server/visa-lint'],
    run: () => ({ code: 2, stdout: '', stderr: 'visa-lint: /ws/k.rs: Permission denied' }),
  });
  vscode.window.activeTextEditor = editor('/ws/k.rs', 'use furiosa_visa_std::prelude::*;', 5);
  await ctl.showTimeline();
  assert.match(vscode.state.shown[0].message, /exited with 2: visa-lint: \/ws\/k\.rs: Permission denied/);
  ctl.dispose();
});

test('the workspace is a furiosa_visa_std one through its Cargo.toml or a visa-lint.toml', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'visa-ws-'));
  const plain = path.join(dir, 'Cargo.toml');
  fs.writeFileSync(plain, '[dependencies]\nserde = "1"\n');
  vscode.state.files = [{ path: plain, fsPath: plain }];
  assert.equal(await workspaceUsesVisa(), false);
  const kernels = path.join(dir, 'kernels.toml');
  fs.writeFileSync(kernels, '[dependencies]\nfuriosa-visa-std = { path = "x" }\n');
  vscode.state.files = [{ path: plain, fsPath: plain }, { path: '/w/Cargo.toml', fsPath: kernels }];
  assert.equal(await workspaceUsesVisa(), true);
  vscode.state.files = [{ path: '/w/visa-lint.toml', fsPath: '/nonexistent' }];
  assert.equal(await workspaceUsesVisa(), true);
  vscode.state.files = [];
  vscode.state.textDocuments = [{ languageId: 'rust', getText: () => 'use furiosa_visa_std::prelude::*;' }];
  assert.equal(await workspaceUsesVisa(), true);
  fs.rmSync(dir, { recursive: true });
});
