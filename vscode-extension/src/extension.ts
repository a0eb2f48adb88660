// Entry point: wires the controller to the real LanguageClient and child processes.
import * as vscode from 'vscode';
import { execFile } from 'child_process';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';
import { sourceUsesVisa } from './activation';
import { ClientFactory, Controller, Runner, workspaceUsesVisa } from './controller';

let controller: Controller | undefined;

/** Drops empty hovers so a position visa-lint knows nothing about shows only rust-analyzer's. */
function hasContent(h: vscode.Hover | null | undefined): boolean {
  if (!h) return false;
  return h.contents.some((c) => {
    const v = typeof c === 'string' ? c : c.value;
    return v.trim() !== '';
  });
}

const makeClient: ClientFactory = (serverPath, initializationOptions, output) => {
  const serverOptions: ServerOptions = {
    run: { command: serverPath, transport: TransportKind.stdio },
    debug: { command: serverPath, transport: TransportKind.stdio },
  };
  let crashes: number[] = [];
  // Until the first initialize succeeds, a closed connection is a failed start: no restarts,
  // so start() rejects and the controller says why.
  let ready = false;
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'rust' },
      { scheme: 'untitled', language: 'rust' },
    ],
    initializationOptions,
    // The server's stderr and the client's own log both go here.
    outputChannel: output,
    diagnosticCollectionName: 'visa-lint',
    middleware: {
      provideHover: async (document, position, token, next) => {
        const h = await next(document, position, token);
        return hasContent(h) ? h : undefined;
      },
    },
    initializationFailedHandler: () => false,
    errorHandler: {
      error: () => ({ action: ready ? ErrorAction.Continue : ErrorAction.Shutdown, handled: !ready }),
      closed: () => {
        if (!ready) return { action: CloseAction.DoNotRestart, handled: true };
        const now = Date.now();
        crashes = crashes.filter((t) => now - t < 180_000);
        crashes.push(now);
        if (crashes.length >= 4) {
          void vscode.window
            .showErrorMessage(
              'visa-lint: visa-lsp stopped 4 times in 3 minutes and will not be restarted. See the output, then run "visa-lint: Restart server".',
              'Show Output',
              'Restart server',
            )
            .then((p) => {
              if (p === 'Show Output') output.show(true);
              if (p === 'Restart server') void vscode.commands.executeCommand('visa-lint.restartServer');
            });
          return { action: CloseAction.DoNotRestart, handled: true };
        }
        output.appendLine('visa-lsp stopped; restarting it');
        return { action: CloseAction.Restart, handled: true };
      },
    },
  };
  const client = new LanguageClient('visa-lint', 'visa-lint', serverOptions, clientOptions);
  return {
    start: async () => {
      await client.start();
      ready = client.isRunning();
    },
    isRunning: () => client.isRunning(),
    stop: async () => {
      ready = false;
      if (client.isRunning()) await client.stop();
      else await client.dispose();
    },
    sendNotification: (method, params) => client.sendNotification(method, params),
  };
};

const run: Runner = (command, args) =>
  new Promise((resolve) => {
    execFile(command, args, { maxBuffer: 64 << 20, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) || (err && code === null ? err.message : '') });
    });
  });

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('visa-lint');
  const ctl = new Controller(context.extensionPath, output, makeClient, run);
  controller = ctl;
  context.subscriptions.push(
    output,
    ctl,
    vscode.commands.registerCommand('visa-lint.restartServer', () => ctl.restart()),
    vscode.commands.registerCommand('visa-lint.showOutput', () => output.show(true)),
    vscode.commands.registerCommand('visa-lint.showTimeline', () => ctl.showTimeline()),
    vscode.workspace.onDidChangeConfiguration((e) => ctl.configurationChanged(e)),
    vscode.window.onDidChangeActiveTextEditor(() => ctl.scheduleStatus()),
    vscode.window.onDidChangeTextEditorSelection(() => ctl.scheduleStatus(150)),
    vscode.workspace.onDidSaveTextDocument(() => ctl.scheduleStatus(0)),
  );
  if (await workspaceUsesVisa()) {
    await ctl.start();
  } else {
    // Start when a Rust file that uses either kernel library is opened.
    const watch = vscode.workspace.onDidOpenTextDocument(async (d) => {
      if (d.languageId === 'rust' && sourceUsesVisa(d.getText())) {
        watch.dispose();
        await ctl.start();
      }
    });
    context.subscriptions.push(watch);
  }
  ctl.scheduleStatus(0);
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}
