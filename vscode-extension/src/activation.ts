// Whether a workspace or a file is a furiosa_visa_std one: the extension starts its server
// only then, so plain Rust projects get nothing from it.

const CRATE = /furiosa[_-]visa[_-]std/;

/** A Cargo.toml that depends on furiosa_visa_std (either spelling). */
export function manifestUsesVisa(cargoToml: string): boolean {
  return cargoToml
    .split('\n')
    .map((l) => l.replace(/#.*$/, ''))
    .some((l) => CRATE.test(l));
}

/** A Rust source that uses furiosa_visa_std. */
export function sourceUsesVisa(text: string): boolean {
  return /\bfuriosa_visa_std\b/.test(text);
}
