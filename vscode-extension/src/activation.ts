// Whether a workspace or a file is a kernel crate: one on the manual's furiosa_visa_std or on
// furiosa-opt-std (0.2 to 0.6). The extension starts its server only then, so plain Rust
// projects get nothing from it.

const CRATE = /furiosa[_-](visa|opt)[_-]std/;

/** A Cargo.toml that depends on either kernel library (either spelling). */
export function manifestUsesVisa(cargoToml: string): boolean {
  return cargoToml
    .split('\n')
    .map((l) => l.replace(/#.*$/, ''))
    .some((l) => CRATE.test(l));
}

/** A Rust source that uses either kernel library. */
export function sourceUsesVisa(text: string): boolean {
  return /\bfuriosa_(visa|opt)_std\b/.test(text);
}
