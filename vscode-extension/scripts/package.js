#!/usr/bin/env node
// `npm run package`: bundles the language server and the CLI when they have been built
// (VISA_BUNDLE_DIR, else ../target/release, else ../target/debug; debug info stripped), then
// runs `vsce package`. With binaries the .vsix is platform-specific (`--target linux-x64` and
// so on); without (VISA_BUNDLE=0, or nothing built) it is universal and the extension finds
// visa-lsp through its setting or PATH.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');

const here = path.resolve(__dirname, '..');
const repo = path.resolve(here, '..');
const out = path.join(here, 'server');
const exe = (n) => (process.platform === 'win32' ? `${n}.exe` : n);

fs.rmSync(out, { recursive: true, force: true });

function candidates() {
  if (process.env.VISA_BUNDLE_DIR) return [path.resolve(process.env.VISA_BUNDLE_DIR)];
  return ['release', 'debug'].map((p) => path.join(repo, 'target', p));
}

let bundled = [];
if (process.env.VISA_BUNDLE !== '0') {
  const dir = candidates().find((d) => fs.existsSync(path.join(d, exe('visa-lsp'))));
  if (dir) {
    fs.mkdirSync(out, { recursive: true });
    for (const name of ['visa-lsp', 'visa-lint']) {
      const src = path.join(dir, exe(name));
      if (!fs.existsSync(src)) continue;
      const dst = path.join(out, exe(name));
      fs.copyFileSync(src, dst);
      fs.chmodSync(dst, 0o755);
      try {
        execFileSync('strip', ['--strip-debug', dst], { stdio: 'ignore' });
      } catch {
        // no strip: bundle as built
      }
      bundled.push(`${dst} (${(fs.statSync(dst).size / 1e6).toFixed(1)} MB, from ${src})`);
    }
  }
}

const args = ['package', '--no-dependencies', '--skip-license', '--allow-missing-repository', '--no-rewrite-relative-links'];
if (bundled.length > 0) {
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch] ?? process.arch;
  const platform = { linux: 'linux', darwin: 'darwin', win32: 'win32' }[process.platform] ?? process.platform;
  args.push('--target', `${platform}-${arch}`);
  console.log(`bundled:\n  ${bundled.join('\n  ')}`);
} else {
  console.log('no visa-lsp bundled (build it with `cargo build --release --bin visa-lsp`): a universal .vsix');
}
if (process.env.VISA_VSIX_OUT) args.push('--out', process.env.VISA_VSIX_OUT);
const vsce = path.join(here, 'node_modules', '@vscode', 'vsce', 'vsce');
execFileSync(process.execPath, [vsce, ...args], { cwd: here, stdio: 'inherit' });
