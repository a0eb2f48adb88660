// The VS Code end-to-end test: Debian's chromium (through puppeteer-core) opens code-server,
// where run.sh installed the packaged .vsix, and checks what a kernel writer sees: the error
// squiggle, the Problems panel, the hover over an `m![...]` with its size, the padding quick
// fix making the diagnostic disappear. Saves screenshots into $ARTIFACTS.
//
// Env: URL (code-server), WORKSPACE (folder to open), FILE (name of the kernel in it), CODE
// (the rule), SIZE (the size the hover must show), CHROMIUM, ARTIFACTS, EXTENSIONS (code-server's
// extensions directory: the server to kill runs from there), TIMELINE=1 to check the status bar
// and the timeline, ONLY_DIAGNOSTICS=1 to stop once the diagnostic is in the editor and the
// Problems panel (another library's crate: the extension starts and the server reads it),
// ALIAS_FIX=1 with LINE, DEFINES and EXPECT to apply a fix that edits another file (see
// aliasFix).
import puppeteer from 'puppeteer-core';
import fs from 'node:fs';
import path from 'node:path';

const env = (k, d) => {
  const v = process.env[k] ?? d;
  if (v === undefined) throw new Error(`${k} is not set`);
  return v;
};
const url = env('URL');
const workspace = env('WORKSPACE');
const file = env('FILE', 'kernel.rs');
const code = env('CODE', 'CAP-003');
const size = env('SIZE', '64');
const artifacts = env('ARTIFACTS');
const onlyDiagnostics = process.env.ONLY_DIAGNOSTICS === '1';
const settingsFile = path.join(workspace, '.vscode', 'settings.json'); // workspace settings
fs.mkdirSync(artifacts, { recursive: true });

const t0 = Date.now();
const say = (m) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}`);

const profile = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'visa-e2e-chromium-'));
const browser = await puppeteer.launch({
  executablePath: env('CHROMIUM', '/usr/bin/chromium'),
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${profile}`,
    '--window-size=1440,900',
  ],
  defaultViewport: { width: 1440, height: 900 },
});

let page;
async function shot(name) {
  const p = path.join(artifacts, name);
  await page.screenshot({ path: p });
  say(`screenshot ${p}`);
}

async function fail(msg) {
  console.error(`FAIL: ${msg}`);
  if (page) {
    try {
      await shot('vscode-e2e-failure.png');
    } catch {
      // the page is gone
    }
  }
  await browser.close();
  fs.rmSync(profile, { recursive: true, force: true });
  process.exit(1);
}

/** Polls `fn` in the page until it returns a truthy value. */
async function until(what, fn, arg, ms = 60000) {
  try {
    const h = await page.waitForFunction(fn, { timeout: ms, polling: 250 }, arg);
    return await h.jsonValue();
  } catch (e) {
    await fail(`${what}: ${e.message}`);
  }
}

/** Runs a command through the command palette (F1). */
async function palette(command) {
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { visible: true, timeout: 10000 });
  await page.keyboard.type(command, { delay: 10 });
  await until(`"${command}" in the palette`, (c) =>
    [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes(c.split(': ').pop())), command, 15000);
  await page.keyboard.press('Enter');
}

/**
 * Waits for a notification whose text includes `needle`. VS Code shows at most a few toasts
 * at once (the language client adds its own when a server dies), so a notification may only
 * be in the notification center: it is looked for there too, the center opened if needed.
 */
async function notification(what, needle) {
  const find = (n) =>
    [...document.querySelectorAll('.notifications-toasts .notification-toast, .notifications-center .notification-list-item')]
      .map((e) => e.textContent)
      .find((t) => t.includes(n));
  try {
    const h = await page.waitForFunction(find, { timeout: 20000, polling: 250 }, needle);
    return await h.jsonValue();
  } catch {
    say(`${what}: not among the toasts, looking in the notification center`);
  }
  await palette('Notifications: Show Notifications');
  return until(what, find, needle, 20000);
}

/** Opens `name` with Quick Open (Ctrl+P) and waits for its tab. */
async function openFile(name) {
  await page.click('.monaco-workbench .part.editor');
  for (let attempt = 0; attempt < 3; attempt++) {
    await page.keyboard.down('Control');
    await page.keyboard.press('KeyP');
    await page.keyboard.up('Control');
    try {
      await page.waitForSelector('.quick-input-widget input', { visible: true, timeout: 5000 });
      break;
    } catch {
      say('quick open did not show; retrying');
    }
  }
  await page.keyboard.type(name, { delay: 20 });
  await until('quick open results', (f) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => r.textContent.includes(f)), name, 15000);
  await page.keyboard.press('Enter');
  await until(`${name} in an editor`, (f) => document.querySelector('.tab.active')?.textContent.includes(f), name, 15000);
}

/**
 * ALIAS_FIX=1: the diagnostic on the line holding LINE is reported where a kernel uses an
 * alias that DEFINES (another file of the crate) defines; the quick fix "... where it is
 * defined" pads it there: the diagnostic goes, and DEFINES, opened, holds EXPECT.
 */
async function aliasFix() {
  const lineText = env('LINE');
  const defines = env('DEFINES');
  const expected = env('EXPECT');
  const squiggle = await until(
    `the ${code} squiggle on the line of "${lineText}"`,
    (t) => {
      const line = [...document.querySelectorAll('.monaco-editor .view-line')].find((l) => l.textContent.replace(/\u00a0/g, ' ').includes(t));
      if (!line) return undefined;
      const ly = line.getBoundingClientRect();
      const hit = [...document.querySelectorAll('.monaco-editor .squiggly-warning, .monaco-editor .squiggly-error')].find((q) => {
        const r = q.getBoundingClientRect();
        return Math.abs(r.y + r.height / 2 - (ly.y + ly.height / 2)) < ly.height;
      });
      if (!hit) return undefined;
      const r = hit.getBoundingClientRect();
      return { x: r.x, y: r.y, w: r.width, h: r.height };
    },
    lineText,
    90000,
  );
  say(`squiggle on the line of "${lineText}"`);
  await showProblems();
  await until('the Problems panel entry', (c) => [...document.querySelectorAll('.markers-panel .monaco-list-row')].some((r) => r.textContent.includes(c)), code, 30000);
  const titles = await quickFixes(squiggle.x + Math.min(squiggle.w / 2, 20), squiggle.y + squiggle.h / 2);
  const index = titles.findIndex((t) => t.includes('where it is defined'));
  if (index < 0) await fail('no fix that pads the alias where it is defined');
  const rows = await page.$$('.action-widget .monaco-list-row');
  await rows[index].click();
  say(`applied: ${titles[index]}`);
  await showProblems();
  await until(
    'the Problems panel without the diagnostic',
    (c) => ![...document.querySelectorAll('.markers-panel .monaco-list-row')].some((r) => r.textContent.includes(c)),
    code,
    30000,
  );
  say(`${code} is gone from the Problems panel`);
  await shot(`vscode-e2e-alias-fix-${code}.png`);
  await openFile(defines);
  const line = await until(
    'the alias padded where it is defined',
    (e) => [...document.querySelectorAll('.monaco-editor .view-line')].map((l) => l.textContent.replace(/\u00a0/g, ' ')).find((t) => t.trim() === e),
    expected,
    15000,
  );
  say(`${defines} now: ${line.trim()}`);
  await shot('vscode-e2e-alias-fix-definition.png');
}

/** Puts the cursor at (x, y) and opens the quick fix menu (Ctrl+.): the titles of its rows.
 * On a loaded machine the first Ctrl+. can land while a hover still holds the focus: the menu
 * is asked for once more before the test gives up. */
async function quickFixes(x, y) {
  const menu = () => {
    const rows = [...document.querySelectorAll('.action-widget .monaco-list-row')];
    return rows.length > 0 && rows.map((r) => r.textContent);
  };
  const open = async () => {
    await page.mouse.click(x, y);
    await page.keyboard.press('Escape');
    await page.keyboard.down('Control');
    await page.keyboard.press('Period');
    await page.keyboard.up('Control');
  };
  await open();
  let titles;
  try {
    const h = await page.waitForFunction(menu, { timeout: 20000, polling: 250 });
    titles = await h.jsonValue();
  } catch (e) {
    say(`no quick fix menu yet (${e.message}); asking again`);
    await page.keyboard.press('Escape');
    await open();
    titles = await until('the quick fix menu', menu, undefined, 30000);
  }
  say(`quick fixes: ${JSON.stringify(titles)}`);
  return titles;
}

/** Ctrl+Shift+M: the Problems panel. */
async function showProblems() {
  await page.keyboard.down('Control');
  await page.keyboard.down('Shift');
  await page.keyboard.press('KeyM');
  await page.keyboard.up('Shift');
  await page.keyboard.up('Control');
}

try {
  page = await browser.newPage();
  page.on('pageerror', (e) => say(`page error: ${e.message}`));
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`, { waitUntil: 'domcontentloaded' });
  await until('the workbench', () => document.querySelector('.monaco-workbench .part.editor'));
  say('workbench up');
  // The explorer lists the workspace once the file service is ready.
  // (a file in a subfolder: the folder, TOP)
  const top = process.env.TOP ?? file;
  await until('the explorer', (f) => [...document.querySelectorAll('.explorer-folders-view .monaco-list-row')].some((r) => r.textContent.includes(f)), top);
  say('explorer lists the kernel');

  await openFile(file);
  say(`opened ${file}`);
  if (process.env.ALIAS_FIX === '1') {
    await aliasFix();
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
    say('vscode e2e passed (an alias padded in the module that defines it)');
    process.exit(0);
  }

  // The error squiggle (the extension activates, starts the bundled visa-lsp, it publishes).
  await until('the error squiggle', () => document.querySelector('.monaco-editor .squiggly-error'), undefined, 90000);
  say('error squiggle shown');

  // The Problems panel.
  await showProblems();
  const problem = await until(
    'the Problems panel entry',
    (c) => [...document.querySelectorAll('.markers-panel .monaco-list-row')].map((r) => r.textContent).find((t) => t.includes(c)),
    code,
    30000,
  );
  say(`problems panel: ${problem}`);
  if (!problem.includes('visa-lint')) await fail(`the Problems entry does not name the source visa-lint: ${problem}`);
  if (onlyDiagnostics) {
    await shot(`vscode-e2e-${code}.png`);
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
    say('vscode e2e passed (the diagnostic, in the editor and the Problems panel)');
    process.exit(0);
  }

  // The output channel: the extension found the server bundled in the .vsix.
  await palette('visa-lint: Show output');
  const started = await until(
    'the server in the output channel',
    // The output panel wraps long lines: the visual lines in order of their position, joined,
    // and the message from `starting ` to the closing parenthesis of where it came from.
    () => {
      const text = [...document.querySelectorAll('.part.panel .view-line')]
        .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
        .map((e) => e.textContent.replace(/\u00a0/g, ' '))
        .join('');
      const at = text.indexOf('starting ');
      const end = at < 0 ? -1 : text.indexOf(')', at);
      return end < 0 ? undefined : text.slice(at, end + 1);
    },
    undefined,
    20000,
  );
  say(`output channel: ${started.trim()}`);
  if (!started.includes('bundled with the extension')) await fail('the server did not come from the .vsix');

  // Settings reach the server: allowing the rule removes the squiggle (didChangeConfiguration);
  // removing the override brings it back (the extension restarts the server for that).
  fs.mkdirSync(path.dirname(settingsFile), { recursive: true });
  const base = {};
  fs.writeFileSync(settingsFile, JSON.stringify({ ...base, 'visa-lint.rules': { [code]: 'allow' } }, null, 2));
  await until('the squiggle to go with the rule allowed', () => !document.querySelector('.monaco-editor .squiggly-error'), undefined, 30000);
  say(`"visa-lint.rules": {"${code}": "allow"} took the squiggle away`);
  fs.writeFileSync(settingsFile, JSON.stringify(base, null, 2));
  await until('the squiggle to return with the override removed', () => document.querySelector('.monaco-editor .squiggly-error'), undefined, 30000);
  await until(
    'the restart in the output channel',
    () => [...document.querySelectorAll('.part.panel .view-line')].some((e) => e.textContent.replace(/\u00a0/g, ' ').includes('the server restarts')),
    undefined,
    10000,
  );
  say('removing the override restarted the server and brought it back');

  // The server dies: the client restarts it and the diagnostic is published again.
  const extensions = env('EXTENSIONS');
  const serverPids = () =>
    fs
      .readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0')[0].startsWith(extensions);
        } catch {
          return false;
        }
      });
  const servers = serverPids();
  if (servers.length !== 1) await fail(`expected one visa-lsp under ${extensions}, found ${servers.length}`);
  process.kill(Number(servers[0]), 'SIGKILL');
  say(`killed visa-lsp (pid ${servers[0]})`);
  await until(
    'the restart after the crash in the output channel',
    () => [...document.querySelectorAll('.part.panel .view-line')].some((e) => e.textContent.replace(/\u00a0/g, ' ').includes('visa-lsp stopped; restarting it')),
    undefined,
    20000,
  );
  for (let i = 0; i < 40 && !serverPids().some((p) => p !== servers[0]); i++) await new Promise((r) => setTimeout(r, 250));
  const respawned = serverPids().filter((p) => p !== servers[0]);
  if (respawned.length !== 1) await fail(`no new visa-lsp after the crash (${respawned.length})`);
  await until('the squiggle after the crash', () => document.querySelector('.monaco-editor .squiggly-error'), undefined, 30000);
  say(`the client restarted the server (pid ${respawned[0]}); the diagnostic is there`);
  await showProblems();
  await until('the Problems panel entry again', (c) => [...document.querySelectorAll('.markers-panel .monaco-list-row')].some((r) => r.textContent.includes(c)), code, 30000);

  // A plain Rust token (the `let` keyword): visa-lint adds no hover of its own.
  const letBox = await page.evaluate(() => {
    for (const span of document.querySelectorAll('.monaco-editor .view-line span span')) {
      if (span.textContent === 'let') {
        const r = span.getBoundingClientRect();
        return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
      }
    }
    return null;
  });
  if (!letBox) await fail('no `let` on screen');
  await page.mouse.move(letBox.x, letBox.y);
  await page.mouse.move(letBox.x + 1, letBox.y);
  await new Promise((r) => setTimeout(r, 2000));
  const plain = await page.evaluate(() =>
    [...document.querySelectorAll('.monaco-hover')].filter((e) => e.offsetParent !== null).map((e) => e.textContent).join(' | '),
  );
  if (plain.trim() !== '') await fail(`a hover on a plain Rust keyword: ${plain}`);
  say('no hover on a plain Rust keyword');
  await page.mouse.move(5, 450);

  // Hover the squiggle (the offending m![...]).
  const box = await page.$eval('.monaco-editor .squiggly-error', (e) => {
    const r = e.getBoundingClientRect();
    return { x: r.x, y: r.y, w: r.width, h: r.height };
  });
  await page.mouse.move(box.x + Math.min(box.w / 2, 30), box.y + box.h / 2 - 2);
  await page.mouse.move(box.x + Math.min(box.w / 2, 30) + 2, box.y + box.h / 2);
  const hover = await until(
    'a hover with the size',
    () => {
      const h = [...document.querySelectorAll('.monaco-hover')].find((e) => e.offsetParent !== null && /size/i.test(e.textContent));
      return h && h.textContent;
    },
    undefined,
    20000,
  );
  say(`hover: ${hover.replace(/\s+/g, ' ').slice(0, 300)}`);
  if (!new RegExp(`size\\s*${size}\\b`).test(hover)) await fail(`the hover does not show "size ${size}"`);
  if (!hover.includes(code)) await fail(`the hover does not show the diagnostic ${code}`);
  await shot('vscode-e2e.png');

  // The quick fix: cursor into the squiggle, Ctrl+., pick the padding fix.
  const titles = await quickFixes(box.x + Math.min(box.w / 2, 30), box.y + box.h / 2);
  const index = titles.findIndex((t) => t.includes('#') || /pad/i.test(t));
  if (index < 0) await fail('no padding fix in the menu');
  const rows = await page.$$('.action-widget .monaco-list-row');
  await rows[index].click();
  say(`applied: ${titles[index]}`);

  // The diagnostic goes away: no squiggle, the Problems panel without it, the text padded.
  await until('the squiggle to disappear', () => !document.querySelector('.monaco-editor .squiggly-error'), undefined, 30000);
  await until(
    'the Problems panel without the diagnostic',
    (c) => ![...document.querySelectorAll('.markers-panel .monaco-list-row')].some((r) => r.textContent.includes(c)),
    code,
    30000,
  );
  // The kernel's signature (not the fixture's doc comment, which quotes the fix).
  const padded = await until('the padded mapping in the signature', () => {
    const l = [...document.querySelectorAll('.monaco-editor .view-line')].map((e) => e.textContent.replace(/\u00a0/g, ' '));
    return l.find((t) => t.includes('fn kernel(') && t.includes('m![A / 8 # 256]'));
  });
  say(`line now: ${padded.trim()}`);
  say(`${code} is gone`);
  await shot('vscode-e2e-fixed.png');

  if (process.env.TIMELINE === '1') {
    // The cost estimate: the status bar item, then "Show kernel timeline" in a webview.
    const status = await until(
      'the cycles in the status bar',
      () => [...document.querySelectorAll('.statusbar-item')].map((e) => e.textContent).find((t) => /kernel: [\d,]+ cycles?\b/.test(t)),
      undefined,
      30000,
    );
    say(`status bar: ${status.trim()}`);
    await palette('visa-lint: Show kernel timeline');
    await until('the timeline tab', () => [...document.querySelectorAll('.tab')].some((t) => t.textContent.includes('Timeline: kernel')), undefined, 30000);
    // The webview's content lives in nested iframes.
    let title;
    for (let i = 0; i < 60 && !title; i++) {
      for (const f of page.frames()) {
        try {
          title = await f.$eval('g.kernel[data-name="kernel"] text.title', (e) => e.textContent);
        } catch {
          // not this frame, or not loaded yet
        }
        if (title) break;
      }
      if (!title) await new Promise((r) => setTimeout(r, 500));
    }
    if (!title) await fail('the timeline webview shows no SVG of the kernel');
    say(`timeline: ${title}`);
    const cycles = status.match(/([\d,]+) cycles?\b/)[1];
    // The SVG's title says `N cycles` whatever N is.
    if (!title.includes(`: ${cycles.replace(/,/g, '')} cycles`)) await fail(`the timeline (${title}) and the status bar (${cycles}) disagree`);
    await shot('vscode-e2e-timeline.png');
  } else {
    say('timeline and status bar not checked: the bundled visa-lint has no `cost` subcommand');
  }

  // A wrong visa-lint.server.path: the extension restarts onto it and says what is wrong.
  await palette('Notifications: Clear All Notifications');
  fs.writeFileSync(settingsFile, JSON.stringify({ 'visa-lint.server.path': '/nonexistent/visa-lsp' }, null, 2));
  const toast = await notification('the notification about the wrong server path', 'visa-lint.server.path');
  say(`notification: ${toast}`);
  if (!toast.includes('/nonexistent/visa-lsp') || !toast.includes('Open Settings') || !toast.includes('Show Output')) {
    await fail('the notification does not name the path and offer its remedies');
  }
  // A binary that is no language server: "failed to start" with the reason.
  await palette('Notifications: Clear All Notifications');
  fs.writeFileSync(settingsFile, JSON.stringify({ 'visa-lint.server.path': '/bin/false' }, null, 2));
  const failed = await notification('the notification about a server that does not start', '/bin/false');
  say(`notification: ${failed}`);
  await shot('vscode-e2e-notification.png');
} catch (e) {
  await fail(e.stack ?? String(e));
}
await browser.close();
fs.rmSync(profile, { recursive: true, force: true });
say('vscode e2e passed');
