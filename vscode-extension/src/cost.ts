// The cost simulator through the CLI: `visa-lint cost FILE --format json [--timeline out.svg]`.
// The language server has no request for it, so the extension runs the CLI on the document's
// text (written to a temporary file when the buffer has unsaved changes).

export interface KernelReport {
  name: string;
  /** 1-based line of the function. */
  line: number;
  total_cycles: number;
  bottleneck?: string;
  hints?: { line: number; op: string; hint: string; saves_cycles: number }[];
}

export interface CostReport {
  kernels: KernelReport[];
}

/** Parses the CLI's JSON report; throws with the reason when it is not one. */
export function parseReport(stdout: string): CostReport {
  let v: unknown;
  try {
    v = JSON.parse(stdout);
  } catch (e) {
    throw new Error(`visa-lint cost printed no JSON: ${(e as Error).message}`);
  }
  const ks = (v as { kernels?: unknown }).kernels;
  if (!Array.isArray(ks)) {
    throw new Error('visa-lint cost: the report has no `kernels` array');
  }
  const kernels: KernelReport[] = [];
  for (const k of ks) {
    if (
      typeof k?.name === 'string' &&
      typeof k?.line === 'number' &&
      typeof k?.total_cycles === 'number'
    ) {
      kernels.push(k as KernelReport);
    }
  }
  return { kernels };
}

/**
 * The kernel the cursor is in: the last one starting on or before the (0-based) cursor line;
 * before the first kernel, the first one. Undefined when the file has none.
 */
export function kernelAt(report: CostReport, cursorLine0: number): KernelReport | undefined {
  const sorted = [...report.kernels].sort((a, b) => a.line - b.line);
  let best: KernelReport | undefined;
  for (const k of sorted) {
    if (k.line - 1 <= cursorLine0) best = k;
  }
  return best ?? sorted[0];
}

export function formatCycles(n: number): string {
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The status bar's text for a kernel. */
export function cycles(n: number): string {
  return `${formatCycles(n)} ${Math.round(n) === 1 ? 'cycle' : 'cycles'}`;
}

export function statusText(k: KernelReport): string {
  return `$(pulse) ${k.name}: ${cycles(k.total_cycles)}`;
}

export function statusTooltip(k: KernelReport): string {
  const lines = [`visa-lint cost estimate for \`${k.name}\` (line ${k.line})`];
  if (k.bottleneck) lines.push(`bottleneck: ${k.bottleneck}`);
  for (const h of k.hints ?? []) {
    lines.push(`line ${h.line} ${h.op}: ${h.hint} (saves ${cycles(h.saves_cycles)})`);
  }
  lines.push('Click: show the kernel timeline');
  return lines.join('\n');
}

/**
 * Whether `visa-lint cost --help` printed the help of a `cost` subcommand. A CLI from before the
 * simulator prints its main help there (and would take `cost` for a path to lint).
 */
export function helpHasCost(stdout: string): boolean {
  return /^Usage: \S*visa-lint\S* cost\b/m.test(stdout);
}

function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/**
 * The webview's page: the simulator's SVG inline (no scripts in it run: the policy allows only
 * the one nonce'd script that scrolls to the kernel), the kernel under the cursor highlighted.
 */
export function timelineHtml(
  svg: string,
  file: string,
  kernel: KernelReport | undefined,
  nonce: string,
  cspSource: string,
): string {
  const svgStart = svg.indexOf('<svg');
  const body = svgStart >= 0 ? svg.slice(svgStart) : '';
  const name = kernel && /^[A-Za-z_][A-Za-z0-9_]*$/.test(kernel.name) ? kernel.name : undefined;
  const highlight = name
    ? `g.kernel:not([data-name="${name}"]) { opacity: 0.35; }`
    : '';
  const heading = kernel
    ? `<h2>${escapeHtml(kernel.name)}: ${cycles(kernel.total_cycles)}` +
      (kernel.bottleneck ? `, bottleneck ${escapeHtml(kernel.bottleneck)}` : '') +
      '</h2>'
    : '<h2>No kernel with engine operations in this file</h2>';
  const hints = (kernel?.hints ?? [])
    .map(
      (h) =>
        `<li>line ${h.line} ${escapeHtml(h.op)}: ${escapeHtml(h.hint)} (saves ${cycles(h.saves_cycles)})</li>`,
    )
    .join('');
  const scroll = name
    ? `<script nonce="${nonce}">const k = document.querySelector('g.kernel[data-name="${name}"]'); if (k) window.scrollTo(0, k.getBoundingClientRect().top + window.scrollY - 8);</script>`
    : '';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src ${cspSource} data:; style-src 'unsafe-inline'; script-src 'nonce-${nonce}';">
<title>Kernel timeline</title>
<style>body { background: #fff; color: #111; font-family: sans-serif; } .timeline svg { max-width: 100%; height: auto; } ${highlight}</style>
</head><body>
<p>${escapeHtml(file)}</p>
${heading}
${hints ? `<ul>${hints}</ul>` : ''}
<div class="timeline">${body}</div>
${scroll}
</body></html>`;
}
