// The settings mirrored from the server's configuration (`server/src/lsp/config.rs`): what is
// sent as initializationOptions and in workspace/didChangeConfiguration.

/** The subset of `vscode.WorkspaceConfiguration` used here. */
export interface ConfigLike {
  get<T>(key: string): T | undefined;
}

export interface ServerSettings {
  target?: string;
  rules?: Record<string, string>;
  strictBankRule?: boolean;
  perfSeverity?: string;
  inlayHints?: boolean;
  rulesDocUrl?: string;
}

export const MIRRORED = [
  'target',
  'rules',
  'strictBankRule',
  'perfSeverity',
  'inlayHints',
  'rulesDocUrl',
] as const;

const LEVELS = new Set(['allow', 'warn', 'deny']);

/**
 * The server's settings from the `visa-lint` configuration section. Empty strings (the
 * defaults of the free-text settings) are left out so the workspace's `visa-lint.toml` and the
 * server's own defaults apply.
 */
export function serverSettings(cfg: ConfigLike): ServerSettings {
  const out: ServerSettings = {};
  const target = cfg.get<string>('target');
  if (typeof target === 'string' && target !== '') out.target = target;
  const rules = cfg.get<Record<string, unknown>>('rules');
  if (rules && typeof rules === 'object') {
    const r: Record<string, string> = {};
    for (const [k, v] of Object.entries(rules)) {
      if (typeof v === 'string' && LEVELS.has(v)) r[k] = v;
    }
    if (Object.keys(r).length > 0) out.rules = r;
  }
  const strict = cfg.get<boolean>('strictBankRule');
  if (typeof strict === 'boolean') out.strictBankRule = strict;
  const perf = cfg.get<string>('perfSeverity');
  if (typeof perf === 'string' && perf !== '') out.perfSeverity = perf;
  const inlay = cfg.get<boolean>('inlayHints');
  if (typeof inlay === 'boolean') out.inlayHints = inlay;
  const url = cfg.get<string>('rulesDocUrl');
  if (typeof url === 'string' && url !== '') out.rulesDocUrl = url;
  return out;
}

/**
 * Whether going from `prev` to `next` needs a fresh server rather than a
 * didChangeConfiguration: the server layers every configuration it receives over the previous
 * ones, so a rule override or a free-text setting that disappears would stay in force.
 */
export function needsRestart(prev: ServerSettings, next: ServerSettings): boolean {
  for (const k of Object.keys(prev.rules ?? {})) {
    if (!next.rules || !(k in next.rules)) return true;
  }
  if (prev.rulesDocUrl !== undefined && next.rulesDocUrl === undefined) return true;
  if (prev.target !== undefined && next.target === undefined) return true;
  return false;
}
