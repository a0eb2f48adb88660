// The real visa-lsp over stdio with vscode-jsonrpc (the transport vscode-languageclient uses),
// given what the extension sends: initializationOptions in the server's spelling, then
// workspace/didChangeConfiguration. Diagnostics, a hover and the padding quick fix on
// fixtures/rules/CAP-003.rs.
//
// The binary: $VISA_LSP, else ../target/debug/visa-lsp (built with cargo when missing).
import { after, before, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { ChildProcess, execFileSync, spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import {
  createMessageConnection,
  MessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-jsonrpc/node';
import { serverSettings } from '../../src/settings';

const repo = path.resolve(__dirname, '../../../..');
const fixture = path.join(repo, 'fixtures/rules/CAP-003.rs');

function serverBinary(): string {
  if (process.env.VISA_LSP) return process.env.VISA_LSP;
  const p = path.join(repo, 'target/debug/visa-lsp');
  if (!fs.existsSync(p)) {
    execFileSync('cargo', ['build', '-q', '--bin', 'visa-lsp'], { cwd: repo, stdio: 'inherit' });
  }
  return p;
}

interface Diag {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  code?: string;
  source?: string;
  severity?: number;
  message: string;
}
interface TextEdit {
  range: Diag['range'];
  newText: string;
}

let proc: ChildProcess;
let conn: MessageConnection;
let stderr = '';
const published = new Map<string, { version?: number; diagnostics: Diag[] }[]>();
const waiters: (() => void)[] = [];

/** Waits until the latest publish for `uri` satisfies `ok`. */
function waitFor(uri: string, ok: (d: Diag[], version?: number) => boolean, what: string, ms = 20000): Promise<Diag[]> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const all = published.get(uri);
      const last = all?.[all.length - 1];
      if (last && ok(last.diagnostics, last.version)) {
        clearTimeout(timer);
        resolve(last.diagnostics);
        return true;
      }
      return false;
    };
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr: ${stderr}`)), ms);
    if (!check()) {
      const w = () => {
        if (!check()) waiters.push(w);
      };
      waiters.push(w);
    }
  });
}

function applyEdits(text: string, edits: TextEdit[]): string {
  const lines = text.split('\n');
  const offset = (p: { line: number; character: number }) =>
    lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character; // ASCII fixture
  const sorted = [...edits].sort((a, b) => offset(b.range.start) - offset(a.range.start));
  for (const e of sorted) {
    text = text.slice(0, offset(e.range.start)) + e.newText + text.slice(offset(e.range.end));
  }
  return text;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'visa-protocol-'));
const file = path.join(dir, 'kernel.rs');
const uri = pathToFileURL(file).href;
let text = '';
/** The 0-based line of the kernel's signature, which holds the offending `m![A / 8]`. */
let SIG = -1;

before(async () => {
  fs.copyFileSync(fixture, file);
  text = fs.readFileSync(file, 'utf8');
  SIG = text.split('\n').findIndex((l) => l.startsWith('fn kernel('));
  assert.ok(SIG > 0, 'the fixture has its kernel signature');
  proc = spawn(serverBinary(), [], { stdio: ['pipe', 'pipe', 'pipe'] });
  proc.stderr!.on('data', (d) => (stderr += String(d)));
  conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
  conn.onNotification('textDocument/publishDiagnostics', (p: { uri: string; version?: number; diagnostics: Diag[] }) => {
    const list = published.get(p.uri) ?? [];
    list.push({ version: p.version, diagnostics: p.diagnostics });
    published.set(p.uri, list);
    for (const w of waiters.splice(0)) w();
  });
  conn.onNotification('window/logMessage', () => {});
  conn.onRequest('workspace/configuration', () => []);
  conn.onRequest('client/registerCapability', () => null);
  conn.listen();
  // What the extension sends for `"visa-lint.rules": {"CAP-003": "allow"}`.
  const initializationOptions = serverSettings({
    get: <T>(k: string) => ({ rules: { 'CAP-003': 'allow' }, perfSeverity: 'hint', target: 'rngd' })[k] as T,
  });
  const init = (await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(dir).href,
    workspaceFolders: [{ uri: pathToFileURL(dir).href, name: 'w' }],
    capabilities: { textDocument: { hover: { contentFormat: ['markdown'] }, publishDiagnostics: { versionSupport: true } } },
    initializationOptions,
  })) as { capabilities: Record<string, unknown>; serverInfo?: { name: string } };
  assert.equal(init.serverInfo?.name, 'visa-lsp');
  assert.ok(init.capabilities.hoverProvider);
  assert.ok(init.capabilities.codeActionProvider);
  await conn.sendNotification('initialized', {});
});

after(async () => {
  try {
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
  } catch {
    // already gone
  }
  conn?.dispose();
  proc?.kill();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the rule allowed through initializationOptions is not reported; didChangeConfiguration brings it back', async () => {
  await conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'rust', version: 1, text } });
  const first = await waitFor(uri, (_d, v) => v === 1, 'the first publish');
  assert.deepEqual(first.filter((d) => d.code === 'CAP-003'), []);
  // What the extension sends when the user removes the override and denies the family.
  await conn.sendNotification('workspace/didChangeConfiguration', { settings: { rules: { CAP: 'deny' } } });
  const diags = await waitFor(uri, (d) => d.some((x) => x.code === 'CAP-003'), 'CAP-003 after the configuration change');
  const d = diags.find((x) => x.code === 'CAP-003')!;
  assert.equal(d.source, 'visa-lint');
  assert.equal(d.severity, 1);
  // The span is the tensor's `m![A / 8]` in the kernel's signature.
  assert.equal(d.range.start.line, SIG);
  const line = text.split('\n')[SIG];
  assert.equal(line.slice(d.range.start.character, d.range.end.character), 'm![A / 8]');
});

test('the hover over the m![...] shows its size', async () => {
  const line = text.split('\n')[SIG];
  const character = line.indexOf('m![A / 8]') + 4;
  const h = (await conn.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: SIG, character } })) as {
    contents: { kind: string; value: string };
  };
  assert.equal(h.contents.kind, 'markdown');
  assert.match(h.contents.value, /size/i);
  assert.match(h.contents.value, /\b64\b/);
  // Outside anything visa-lint knows (the `fn` keyword): no hover, rust-analyzer's stands alone.
  const none = await conn.sendRequest('textDocument/hover', { textDocument: { uri }, position: { line: SIG, character: 1 } });
  assert.equal(none, null);
});

test('the preferred quick fix pads the mapping and the diagnostic goes away', async () => {
  const diags = published.get(uri)!.at(-1)!.diagnostics;
  const d = diags.find((x) => x.code === 'CAP-003')!;
  const actions = (await conn.sendRequest('textDocument/codeAction', {
    textDocument: { uri },
    range: d.range,
    context: { diagnostics: [d], only: ['quickfix'] },
  })) as { title: string; kind?: string; isPreferred?: boolean; edit?: { changes?: Record<string, TextEdit[]> } }[];
  const preferred = actions.find((a) => a.isPreferred);
  assert.ok(preferred, `no preferred action in ${JSON.stringify(actions.map((a) => a.title))}`);
  assert.equal(preferred.kind, 'quickfix');
  const edits = preferred.edit?.changes?.[uri];
  assert.ok(edits && edits.length > 0);
  text = applyEdits(text, edits);
  assert.ok(text.split('\n')[SIG].includes('m![A / 8 # 256]'), text.split('\n')[SIG]);
  await conn.sendNotification('textDocument/didChange', {
    textDocument: { uri, version: 2 },
    contentChanges: [{ text }],
  });
  const after = await waitFor(uri, (_d, v) => v === 2, 'the publish of version 2');
  assert.deepEqual(after.filter((x) => x.code === 'CAP-003'), []);
});
