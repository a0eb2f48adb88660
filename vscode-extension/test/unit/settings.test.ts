import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { needsRestart, serverSettings } from '../../src/settings';

const cfg = (values: Record<string, unknown>) => ({ get: <T>(k: string) => values[k] as T | undefined });

test('the mirrored settings keep the server spelling and drop empty free text', () => {
  const s = serverSettings(
    cfg({
      target: 'rngd-s',
      rules: { 'CAP-003': 'allow', BNK: 'deny', 'MAP-007': 'loud', 'SEQ-001': 3 },
      strictBankRule: true,
      perfSeverity: 'hint',
      inlayHints: false,
      rulesDocUrl: '',
      'server.path': '/x/visa-lsp',
    }),
  );
  assert.deepEqual(s, {
    target: 'rngd-s',
    rules: { 'CAP-003': 'allow', BNK: 'deny' },
    strictBankRule: true,
    perfSeverity: 'hint',
    inlayHints: false,
  });
});

test('an empty configuration sends nothing', () => {
  assert.deepEqual(serverSettings(cfg({ rules: {} })), {});
});

test('a removed rule override needs a fresh server; a changed or added one does not', () => {
  const a = { rules: { 'CAP-003': 'allow' } };
  assert.equal(needsRestart(a, {}), true);
  assert.equal(needsRestart(a, { rules: { BNK: 'deny' } }), true);
  assert.equal(needsRestart(a, { rules: { 'CAP-003': 'deny', BNK: 'deny' } }), false);
  assert.equal(needsRestart({}, { perfSeverity: 'hint' }), false);
  assert.equal(needsRestart({ perfSeverity: 'hint' }, { perfSeverity: 'information' }), false);
  assert.equal(needsRestart({ rulesDocUrl: 'https://x/rules' }, {}), true);
});
