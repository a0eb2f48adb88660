import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { discover, Env, expand, missingMessage } from '../../src/discovery';

const env: Env = { platform: 'linux', PATH: '/usr/local/bin:/usr/bin:', home: '/home/k', workspaceFolder: '/ws' };
const fsWith = (...exes: string[]) => ({ isExecutable: (p: string) => exes.includes(p) });

test('the setting wins over the bundled binary and PATH', () => {
  const f = discover('visa-lsp', '/opt/visa-lsp', '/ext', env, fsWith('/opt/visa-lsp', '/ext/server/visa-lsp', '/usr/bin/visa-lsp'));
  assert.deepEqual(f, { kind: 'found', path: '/opt/visa-lsp', source: 'setting' });
});

test('a setting naming nothing is reported, not replaced by another binary', () => {
  const f = discover('visa-lsp', '~/bin/visa-lsp', '/ext', env, fsWith('/ext/server/visa-lsp'));
  assert.deepEqual(f, { kind: 'missing', tried: ['/home/k/bin/visa-lsp'], setting: '/home/k/bin/visa-lsp' });
  assert.match(missingMessage(f as never), /visa-lint\.server\.path names \/home\/k\/bin\/visa-lsp/);
});

test('a relative setting is taken from the workspace folder; ${workspaceFolder} expands', () => {
  assert.equal(expand('${workspaceFolder}/target/debug/visa-lsp', env), '/ws/target/debug/visa-lsp');
  const f = discover('visa-lsp', 'target/debug/visa-lsp', '/ext', env, fsWith('/ws/target/debug/visa-lsp'));
  assert.equal(f.kind === 'found' && f.path, '/ws/target/debug/visa-lsp');
});

test('without a setting: bundled first, then PATH in order', () => {
  assert.deepEqual(discover('visa-lsp', '', '/ext', env, fsWith('/ext/server/visa-lsp', '/usr/bin/visa-lsp')), {
    kind: 'found',
    path: '/ext/server/visa-lsp',
    source: 'bundled',
  });
  assert.deepEqual(discover('visa-lsp', undefined, '/ext', env, fsWith('/usr/bin/visa-lsp', '/usr/local/bin/visa-lsp')), {
    kind: 'found',
    path: '/usr/local/bin/visa-lsp',
    source: 'PATH',
  });
});

test('the CLI is also looked for beside the server, before PATH', () => {
  const f = discover('visa-lint', '', '/ext', env, fsWith('/usr/bin/visa-lint', '/build/visa-lint'), '/build/visa-lsp');
  assert.deepEqual(f, { kind: 'found', path: '/build/visa-lint', source: 'beside-server' });
});

test('nothing found: every place tried is listed and the remedy is named', () => {
  const f = discover('visa-lsp', '', '/ext', env, fsWith());
  assert.equal(f.kind, 'missing');
  assert.deepEqual(f.kind === 'missing' && f.tried, ['/ext/server/visa-lsp', '/usr/local/bin/visa-lsp', '/usr/bin/visa-lsp']);
  const msg = missingMessage(f as never);
  assert.match(msg, /cargo install --path server/);
  assert.match(msg, /visa-lint\.server\.path/);
});

test('Windows: .exe and ; separated PATH', () => {
  const w: Env = { platform: 'win32', PATH: 'C:\\a;C:\\b', home: 'C:\\u', workspaceFolder: undefined };
  const f = discover('visa-lsp', '', '/ext', w, fsWith('/ext/server/visa-lsp.exe'));
  assert.equal(f.kind === 'found' && f.path, '/ext/server/visa-lsp.exe');
});
