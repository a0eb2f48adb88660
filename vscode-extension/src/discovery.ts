// Where the binaries come from: the user's setting, then the extension's bundled copy, then
// PATH. Pure over an injected file system so it is unit-tested without VS Code.
import * as path from 'path';

export interface Fs {
  isExecutable(file: string): boolean;
}

export interface Env {
  platform: NodeJS.Platform;
  PATH: string | undefined;
  home: string;
  workspaceFolder: string | undefined;
}

export type Found =
  | { kind: 'found'; path: string; source: 'setting' | 'bundled' | 'beside-server' | 'PATH' }
  | { kind: 'missing'; tried: string[]; setting?: string };

export function exeName(name: string, platform: NodeJS.Platform): string {
  return platform === 'win32' ? `${name}.exe` : name;
}

/** Expands a leading `~` and `${workspaceFolder}` (as VS Code's own settings do). */
export function expand(p: string, env: Env): string {
  let out = p.trim();
  if (out === '~' || out.startsWith('~/')) {
    out = env.home + out.slice(1);
  }
  if (out.includes('${workspaceFolder}')) {
    out = out.split('${workspaceFolder}').join(env.workspaceFolder ?? '');
  }
  return out;
}

/**
 * Finds `name` (`visa-lsp`, `visa-lint`). A non-empty setting wins and is never silently
 * replaced: when it names no executable the answer is `missing` with that setting, so the
 * notification can say which path is wrong.
 */
export function discover(
  name: string,
  setting: string | undefined,
  extensionPath: string,
  env: Env,
  fs: Fs,
  beside?: string,
): Found {
  const exe = exeName(name, env.platform);
  const tried: string[] = [];
  if (setting && setting.trim() !== '') {
    let p = expand(setting, env);
    if (!path.isAbsolute(p) && env.workspaceFolder) {
      p = path.join(env.workspaceFolder, p);
    }
    if (fs.isExecutable(p)) {
      return { kind: 'found', path: p, source: 'setting' };
    }
    return { kind: 'missing', tried: [p], setting: p };
  }
  const bundled = path.join(extensionPath, 'server', exe);
  tried.push(bundled);
  if (fs.isExecutable(bundled)) {
    return { kind: 'found', path: bundled, source: 'bundled' };
  }
  if (beside) {
    const b = path.join(path.dirname(beside), exe);
    tried.push(b);
    if (fs.isExecutable(b)) {
      return { kind: 'found', path: b, source: 'beside-server' };
    }
  }
  const sep = env.platform === 'win32' ? ';' : ':';
  for (const dir of (env.PATH ?? '').split(sep)) {
    if (dir === '') continue;
    const p = path.join(dir, exe);
    tried.push(p);
    if (fs.isExecutable(p)) {
      return { kind: 'found', path: p, source: 'PATH' };
    }
  }
  return { kind: 'missing', tried };
}

/** The notification shown when the server is not found. */
export function missingMessage(found: Found & { kind: 'missing' }): string {
  if (found.setting !== undefined) {
    return (
      `visa-lint: the setting visa-lint.server.path names ${found.setting}, which is not an ` +
      'executable file. Fix the path, or clear the setting to use the bundled server or the ' +
      'visa-lsp on PATH.'
    );
  }
  return (
    'visa-lint: no visa-lsp language server found (not in visa-lint.server.path, not bundled ' +
    'with the extension, not on PATH). Install it from the visa-lint repository with ' +
    '`cargo install --path server`, or set visa-lint.server.path to the binary.'
  );
}
