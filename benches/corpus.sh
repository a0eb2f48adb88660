#!/usr/bin/env bash
# The corpus benchmark: about 1,000 kernel files built from the fixtures, checked three ways in
# one run, alternating, several rounds; prints each one's median wall time and the ratios.
#   visa-lint   the whole linter, as a user runs it (release build)
#   rustfmt     `rustfmt --check` on the same files
#   parse       the ra_ap_syntax parse of the same texts (the floor: no analysis at all)
# Usage: benches/corpus.sh [ROUNDS]   (default 5)
# VISA_LINT=PATH times another build of the linter (to compare two builds on one machine).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
corpus="${TMPDIR:-/tmp}/visa-lint-corpus"
rm -rf "$corpus" && mkdir -p "$corpus"
mapfile -t files < <(find fixtures examples -name '*.rs' | sort)
n=0
copy=0
while [ "$n" -lt 1000 ]; do
  mkdir -p "$corpus/$copy"
  for f in "${files[@]}"; do
    [ "$n" -ge 1000 ] && break
    cp "$f" "$corpus/$copy/$(echo "$f" | tr '/' '_')"
    n=$((n + 1))
  done
  copy=$((copy + 1))
done
bytes=$(cat "$corpus"/*/*.rs | wc -c)
echo "corpus: $n files, $bytes bytes (fixtures and examples, copied)"
# The same kernels as one file, and a file of about 5 MB (kernels repeated).
one="${TMPDIR:-/tmp}/visa-lint-corpus-one"
rm -rf "$one" && mkdir -p "$one"
cat "$corpus"/*/*.rs > "$one/all.rs"
: > "$one/big.rs"
while [ "$(wc -c < "$one/big.rs")" -lt 5000000 ]; do cat "$one/all.rs" >> "$one/big.rs"; done

cargo build -q --release --bin visa-lint
cargo build -q --release -p visa-analysis --example parse_floor
lint=${VISA_LINT:-target/release/visa-lint}
floor=target/release/examples/parse_floor

# Wall seconds of one run of a command (its output discarded, its exit status ignored).
wall() {
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null 2>&1 || true
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {m=(NR+1)/2; if (NR%2) print a[m]; else print (a[NR/2]+a[NR/2+1])/2}'; }

declare -a t_lint t_fmt t_parse t_lint1 t_one
for _ in $(seq "$rounds"); do
  t_lint+=("$(wall "$lint" "$corpus")")
  t_lint1+=("$(wall "$lint" --jobs 1 "$corpus")")
  t_one+=("$(wall "$lint" --jobs 1 "$one/all.rs")")
  t_fmt+=("$(wall rustfmt --check --edition 2024 "$corpus"/*/*.rs)")
  t_parse+=("$(wall "$floor" "$corpus")")
done
m_lint=$(printf '%s\n' "${t_lint[@]}" | median)
m_lint1=$(printf '%s\n' "${t_lint1[@]}" | median)
m_fmt=$(printf '%s\n' "${t_fmt[@]}" | median)
m_parse=$(printf '%s\n' "${t_parse[@]}" | median)
m_one=$(printf '%s\n' "${t_one[@]}" | median)
big_bytes=$(wc -c < "$one/big.rs")
big=$( { /usr/bin/time -f "%e %M" "$lint" --jobs 1 "$one/big.rs" > /dev/null || true; } 2>&1 | tail -n 1)
printf 'median of %s rounds (seconds, whole process):\n' "$rounds"
printf '  visa-lint (all cores)   %.3f\n' "$m_lint"
printf '  visa-lint --jobs 1      %.3f\n' "$m_lint1"
printf '  rustfmt --check         %.3f\n' "$m_fmt"
printf '  ra_ap_syntax parse      %.3f\n' "$m_parse"
printf '  visa-lint, one file     %.3f (the same kernels concatenated)\n' "$m_one"
printf 'one file / many files:          %.2fx (target <= 1.5)\n' "$(echo "$m_one / $m_lint1" | bc -l)"
set -- $big
printf 'a %s-byte file: %s s, %s KB peak (%.0f bytes of memory per byte of input; targets 5 s, 50)\n' \
  "$big_bytes" "$1" "$2" "$(echo "$2 * 1024 / $big_bytes" | bc -l)"
printf 'rustfmt / visa-lint:            %.2fx (target >= 3)\n' "$(echo "$m_fmt / $m_lint" | bc -l)"
printf 'visa-lint --jobs 1 / parse:     %.2fx (target <= 2)\n' "$(echo "$m_lint1 / $m_parse" | bc -l)"
