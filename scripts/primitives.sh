#!/bin/sh
# Regenerate a vendor library's primitive list in analysis/src/library/.
#
# Usage: scripts/primitives.sh VENDOR_CHECKOUT [COMMIT]
#
# VENDOR_CHECKOUT is a checkout of furiosa-ai/furiosa-opt. Every public method of its library
# crate carries `#[primitive(Type::method)]` (a type, `#[primitive(Type)]`); the list is those
# names, sorted, without the doc-comment artefact `...`. Names only: no vendor code is copied.
# COMMIT names the vendor commit in the header; it defaults to the checkout's git HEAD.
#
#   furiosa-opt-std/src   -> analysis/src/library/furiosa-opt-std-MAJOR.MINOR.primitives
#   furiosa-visa-std/src  -> analysis/src/library/furiosa_visa_std.primitives
set -eu

[ $# -ge 1 ] && [ $# -le 2 ] || { sed -n 4p "$0" | sed 's/^# //' >&2; exit 2; }
vendor=$1
repo=$(cd "$(dirname "$0")/.." && pwd)

if [ $# -eq 2 ]; then
    commit=$2
elif commit=$(git -C "$vendor" rev-parse --short=7 HEAD 2>/dev/null); then
    :
else
    echo "$vendor is not a git checkout: give its commit as the second argument" >&2
    exit 2
fi

if [ -d "$vendor/furiosa-opt-std/src" ]; then
    lib=furiosa-opt-std
    version=$(sed -n 's/^version *= *"\([0-9]*\.[0-9]*\)\..*"/\1/p' "$vendor/$lib/Cargo.toml" | head -n 1)
    [ -n "$version" ] || { echo "$vendor/$lib/Cargo.toml: no version" >&2; exit 1; }
    out=$repo/analysis/src/library/$lib-$version.primitives
    title="$lib $version"
elif [ -d "$vendor/furiosa-visa-std/src" ]; then
    lib=furiosa-visa-std
    out=$repo/analysis/src/library/furiosa_visa_std.primitives
    title="$lib (furiosa_visa_std)"
else
    echo "$vendor: neither furiosa-opt-std/src nor furiosa-visa-std/src" >&2
    exit 1
fi

mkdir -p "$(dirname "$out")"
{
    echo "# $title primitives: every #[primitive(...)] name in $lib/src (one Type::method, or Type, per line)."
    echo "# Vendor: furiosa-ai/furiosa-opt at $commit. Names only, sorted (LC_ALL=C), the doc-comment '...' dropped."
    echo "# Regenerate: scripts/primitives.sh VENDOR_CHECKOUT $commit   (VENDOR_CHECKOUT: a checkout of that commit)"
    (cd "$vendor" && grep -rhoE '#\[primitive\([^)]*\)\]' "$lib/src") \
        | sed -E 's/^#\[primitive\((.*)\)\]$/\1/' \
        | grep -vxF '...' \
        | LC_ALL=C sort -u
} > "$out"
echo "$out: $(grep -vc '^#' "$out") names" >&2
