import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { formatCycles, kernelAt, helpHasCost, parseReport, statusText, timelineHtml } from '../../src/cost';

const report = parseReport(
  JSON.stringify({
    kernels: [
      { name: 'second', line: 30, total_cycles: 1200, bottleneck: 'DMA', hints: [] },
      { name: 'first', line: 5, total_cycles: 66036, bottleneck: 'Fetch Engine', hints: [{ line: 9, op: 'fetch', hint: 'pad <x>', saves_cycles: 1000 }] },
      { name: 'broken' },
    ],
  }),
);

test('the report keeps only well-formed kernels', () => {
  assert.deepEqual(report.kernels.map((k) => k.name), ['second', 'first']);
  assert.throws(() => parseReport('error: no such file'), /printed no JSON/);
  assert.throws(() => parseReport('{"files": []}'), /no `kernels` array/);
});

test('the kernel under the cursor (0-based cursor, 1-based report lines)', () => {
  assert.equal(kernelAt(report, 0)?.name, 'first'); // above every kernel: the first
  assert.equal(kernelAt(report, 4)?.name, 'first'); // its own line
  assert.equal(kernelAt(report, 28)?.name, 'first');
  assert.equal(kernelAt(report, 29)?.name, 'second');
  assert.equal(kernelAt({ kernels: [] }, 3), undefined);
});

test('status text groups digits', () => {
  assert.equal(formatCycles(66036), '66,036');
  assert.equal(formatCycles(999), '999');
  assert.equal(statusText(report.kernels[1]), '$(pulse) first: 66,036 cycles');
  assert.equal(statusText({ name: 'tiny', line: 1, total_cycles: 1 }), '$(pulse) tiny: 1 cycle');
});

test('a CLI without `cost` is recognised by its help', () => {
  // `visa-lint cost --help` of a CLI with the simulator, and of one from before it.
  assert.equal(helpHasCost('What each engine operation costs\n\nUsage: visa-lint cost [OPTIONS] <FILE>\n'), true);
  assert.equal(helpHasCost('Checks TCP Virtual ISA kernels\n\nUsage: visa-lint [OPTIONS] [PATHS]...\n       visa-lint <COMMAND>\n'), false);
});

test('the timeline page embeds the SVG, highlights the kernel and escapes text', () => {
  const svg = '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><g class="kernel" data-name="first"></g></svg>';
  const html = timelineHtml(svg, '/w/<k>.rs', report.kernels[1], 'abc123', 'vscode-webview://x');
  assert.ok(html.includes('<svg xmlns="http://www.w3.org/2000/svg"><g class="kernel" data-name="first">'));
  assert.ok(!html.includes('<?xml'));
  assert.ok(html.includes('g.kernel:not([data-name="first"]) { opacity: 0.35; }'));
  assert.ok(html.includes("script-src 'nonce-abc123'"));
  assert.ok(html.includes('/w/&lt;k&gt;.rs'));
  assert.ok(html.includes('66,036 cycles, bottleneck Fetch Engine'));
  assert.ok(html.includes('pad &lt;x&gt; (saves 1,000 cycles)'));
  const none = timelineHtml(svg, 'k.rs', undefined, 'n', 'c');
  assert.ok(none.includes('No kernel with engine operations'));
  assert.ok(!none.includes('<script'));
});
