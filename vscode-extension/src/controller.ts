// The extension's behaviour over an injected language client and process runner, so that
// unit tests drive it with a mocked `vscode` module (see test/unit/).
import * as vscode from 'vscode';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { manifestUsesVisa, sourceUsesVisa } from './activation';
import {
  CostReport,
  kernelAt,
  helpHasCost,
  parseReport,
  statusText,
  statusTooltip,
  timelineHtml,
} from './cost';
import { discover, Env, Found, Fs, missingMessage } from './discovery';
import { needsRestart, ServerSettings, serverSettings } from './settings';

export const SECTION = 'visa-lint';

/** The `visa-lint` CLI predates the cost simulator. */
export class NoCost extends Error {}

/** What the controller needs of a `LanguageClient`. */
export interface LspClient {
  start(): Promise<void>;
  /** Whether the server answered initialize and its connection is open. */
  isRunning(): boolean;
  stop(): Promise<void>;
  sendNotification(method: string, params: unknown): Promise<void>;
}

export type ClientFactory = (
  serverPath: string,
  initializationOptions: ServerSettings,
  output: vscode.OutputChannel,
) => LspClient;

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export type Runner = (command: string, args: string[]) => Promise<RunResult>;

export const realFs: Fs = {
  isExecutable(file: string): boolean {
    try {
      if (!fs.statSync(file).isFile()) return false;
      if (process.platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  },
};

const OPEN_SETTINGS = 'Open Settings';
const SHOW_OUTPUT = 'Show Output';

export class Controller implements vscode.Disposable {
  client: LspClient | undefined;
  serverPath: string | undefined;
  private sent: ServerSettings = {};
  private status: vscode.StatusBarItem;
  private reports = new Map<string, { version: number; report: CostReport }>();
  /** Per CLI path: whether it has the `cost` subcommand. */
  private costSupport = new Map<string, boolean>();
  private statusError: string | undefined;
  private panel: vscode.WebviewPanel | undefined;
  private tmp: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionPath: string,
    readonly output: vscode.OutputChannel,
    private readonly makeClient: ClientFactory,
    private readonly run: Runner,
    private readonly files: Fs = realFs,
    private readonly env: () => Env = defaultEnv,
  ) {
    this.status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
    this.status.command = 'visa-lint.showTimeline';
    this.status.name = 'visa-lint kernel cycles';
  }

  private config(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration(SECTION);
  }

  /** Finds and starts the server. Returns whether it runs. */
  async start(): Promise<boolean> {
    if (this.client) return true;
    const cfg = this.config();
    const found = discover('visa-lsp', cfg.get<string>('server.path'), this.extensionPath, this.env(), this.files);
    if (found.kind === 'missing') {
      const msg = missingMessage(found);
      this.output.appendLine(msg);
      this.output.appendLine(`looked at: ${found.tried.join(', ')}`);
      this.notify(msg);
      return false;
    }
    this.serverPath = found.path;
    this.output.appendLine(`starting ${found.path} (${describe(found)})`);
    this.sent = serverSettings(cfg);
    const client = this.makeClient(found.path, this.sent, this.output);
    try {
      await client.start();
      // vscode-languageclient 9 resolves start() instead of rejecting it when the server's
      // connection closes before the initialize reply is read (its close handler drops the
      // pending start promise): a server that is not running after start() did not start.
      if (!client.isRunning()) throw new Error('it exited before answering the initialize request');
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      const msg =
        `visa-lint: the language server ${found.path} failed to start: ${reason}. ` +
        'Check that it runs (`visa-lsp` waits for LSP messages on stdin), rebuild it with ' +
        '`cargo install --path server`, or point visa-lint.server.path at a working binary.';
      this.output.appendLine(msg);
      this.notify(msg);
      try {
        await client.stop();
      } catch {
        // it never ran
      }
      return false;
    }
    this.client = client;
    return true;
  }

  async stop(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    if (c) {
      try {
        await c.stop();
      } catch (e) {
        this.output.appendLine(`stopping the server: ${e instanceof Error ? e.message : e}`);
      }
    }
  }

  async restart(): Promise<boolean> {
    await this.stop();
    this.output.appendLine('restarting the server');
    return this.start();
  }

  private notify(msg: string): void {
    void vscode.window.showErrorMessage(msg, OPEN_SETTINGS, SHOW_OUTPUT).then((pick) => {
      if (pick === OPEN_SETTINGS) {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'visa-lint.server.path');
      } else if (pick === SHOW_OUTPUT) {
        this.output.show(true);
      }
    });
  }

  /** A settings change: a new server path restarts, mirrored settings are sent. */
  async configurationChanged(e: vscode.ConfigurationChangeEvent): Promise<void> {
    if (!e.affectsConfiguration(SECTION)) return;
    if (e.affectsConfiguration(`${SECTION}.statusBar`) || e.affectsConfiguration(`${SECTION}.cli.path`)) {
      this.reports.clear();
      this.costSupport.clear();
      this.statusError = undefined;
      this.scheduleStatus(0);
    }
    if (e.affectsConfiguration(`${SECTION}.server.path`)) {
      await this.restart();
      return;
    }
    const next = serverSettings(this.config());
    if (!this.client) return;
    if (needsRestart(this.sent, next)) {
      this.output.appendLine('settings changed: an override was removed, so the server restarts to drop it');
      await this.restart();
      return;
    }
    if (JSON.stringify(next) === JSON.stringify(this.sent)) return;
    this.sent = next;
    this.output.appendLine(`settings changed: sending ${JSON.stringify(next)}`);
    await this.client.sendNotification('workspace/didChangeConfiguration', { settings: next });
  }

  /** The `visa-lint` CLI (for `cost`). */
  findCli(): Found {
    return discover(
      'visa-lint',
      this.config().get<string>('cli.path'),
      this.extensionPath,
      this.env(),
      this.files,
      this.serverPath,
    );
  }

  private tmpDir(): string {
    if (!this.tmp) this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'visa-lint-'));
    return this.tmp;
  }

  /** The file to give the CLI: the document's own when saved, else a copy of its text. */
  private fileFor(doc: vscode.TextDocument): string {
    if (doc.uri.scheme === 'file' && !doc.isDirty) return doc.uri.fsPath;
    const name = path.basename(doc.uri.path || 'kernel.rs') || 'kernel.rs';
    const p = path.join(this.tmpDir(), name.endsWith('.rs') ? name : `${name}.rs`);
    fs.writeFileSync(p, doc.getText());
    return p;
  }

  /** Runs `visa-lint cost` on a document; `svg` also asks for the timeline. */
  async cost(doc: vscode.TextDocument, svg?: string): Promise<CostReport> {
    const cli = this.findCli();
    if (cli.kind === 'missing') {
      throw new Error(
        cli.setting !== undefined
          ? `visa-lint.cli.path names ${cli.setting}, which is not an executable file`
          : 'no visa-lint CLI found (visa-lint.cli.path, bundled, beside visa-lsp, PATH); install it with `cargo install --path server`',
      );
    }
    let supported = this.costSupport.get(cli.path);
    if (supported === undefined) {
      const help = await this.run(cli.path, ['cost', '--help']);
      supported = help.code === 0 && helpHasCost(help.stdout);
      this.costSupport.set(cli.path, supported);
    }
    if (!supported) {
      throw new NoCost(`${cli.path} has no \`cost\` subcommand: update visa-lint`);
    }
    const args = ['cost', this.fileFor(doc), '--format', 'json'];
    if (svg) args.push('--timeline', svg);
    const r = await this.run(cli.path, args);
    if (r.code !== 0) {
      throw new Error(`${cli.path} ${args.join(' ')} exited with ${r.code}: ${r.stderr.trim()}`);
    }
    const report = parseReport(r.stdout);
    this.reports.set(doc.uri.toString(), { version: doc.version, report });
    return report;
  }

  /** The command "Show kernel timeline". */
  async showTimeline(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== 'rust') {
      void vscode.window.showInformationMessage('visa-lint: open a kernel (a Rust file) to see its timeline.');
      return;
    }
    const doc = editor.document;
    const svgPath = path.join(this.tmpDir(), 'timeline.svg');
    let report: CostReport;
    try {
      report = await this.cost(doc, svgPath);
    } catch (e) {
      const msg = `visa-lint: cannot show the timeline: ${e instanceof Error ? e.message : e}`;
      this.output.appendLine(msg);
      void vscode.window.showErrorMessage(msg, SHOW_OUTPUT).then((p) => {
        if (p === SHOW_OUTPUT) this.output.show(true);
      });
      return;
    }
    const kernel = kernelAt(report, editor.selection.active.line);
    const svg = fs.readFileSync(svgPath, 'utf8');
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        'visa-lint.timeline',
        'Kernel timeline',
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        { enableScripts: true, localResourceRoots: [] },
      );
      this.panel.onDidDispose(() => (this.panel = undefined));
    }
    this.panel.title = kernel ? `Timeline: ${kernel.name}` : 'Kernel timeline';
    const nonce = Array.from({ length: 16 }, () => Math.floor(Math.random() * 36).toString(36)).join('');
    this.panel.webview.html = timelineHtml(svg, doc.uri.fsPath, kernel, nonce, this.panel.webview.cspSource);
    this.panel.reveal(vscode.ViewColumn.Beside, true);
  }

  scheduleStatus(delay = 300): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.updateStatus(), delay);
  }

  /** The status bar: the estimated cycles of the kernel under the cursor. */
  async updateStatus(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!this.config().get<boolean>('statusBar', true) || !editor || editor.document.languageId !== 'rust' || !sourceUsesVisa(editor.document.getText())) {
      this.status.hide();
      return;
    }
    const doc = editor.document;
    const cached = this.reports.get(doc.uri.toString());
    let report = cached?.report;
    if (!cached || (cached.version !== doc.version && !doc.isDirty)) {
      try {
        report = await this.cost(doc);
      } catch (e) {
        // Said once, not on every cursor move.
        const msg = `status bar: ${e instanceof Error ? e.message : e}`;
        if (msg !== this.statusError) this.output.appendLine(msg);
        this.statusError = msg;
        this.status.hide();
        return;
      }
      this.statusError = undefined;
    }
    const cursor = vscode.window.activeTextEditor;
    if (!report || cursor?.document !== doc) return;
    const k = kernelAt(report, cursor.selection.active.line);
    if (!k) {
      this.status.hide();
      return;
    }
    this.status.text = statusText(k);
    this.status.tooltip = statusTooltip(k);
    this.status.show();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.status.dispose();
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
    if (this.tmp) fs.rmSync(this.tmp, { recursive: true, force: true });
  }
}

function describe(f: Found & { kind: 'found' }): string {
  switch (f.source) {
    case 'setting':
      return 'from visa-lint.server.path';
    case 'bundled':
      return 'bundled with the extension';
    case 'beside-server':
      return 'beside the server';
    case 'PATH':
      return 'from PATH';
  }
}

export function defaultEnv(): Env {
  return {
    platform: process.platform,
    PATH: process.env.PATH,
    home: os.homedir(),
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
  };
}

/**
 * Whether the workspace is a kernel crate (furiosa_visa_std or furiosa-opt-std): a
 * `visa-lint.toml`, a `Cargo.toml` that depends on either library, or an open Rust file that
 * uses one.
 */
export async function workspaceUsesVisa(): Promise<boolean> {
  if (vscode.workspace.textDocuments.some((d) => d.languageId === 'rust' && sourceUsesVisa(d.getText()))) {
    return true;
  }
  const found = await vscode.workspace.findFiles('**/{Cargo.toml,visa-lint.toml}', '**/{target,node_modules}/**', 200);
  for (const uri of found) {
    if (uri.path.endsWith('visa-lint.toml')) return true;
    try {
      if (manifestUsesVisa(fs.readFileSync(uri.fsPath, 'utf8'))) return true;
    } catch {
      // unreadable: not ours
    }
  }
  return false;
}
