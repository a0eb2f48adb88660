import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { manifestUsesVisa, sourceUsesVisa } from '../../src/activation';

test('a manifest depending on furiosa_visa_std in either spelling', () => {
  assert.equal(manifestUsesVisa('[dependencies]\nfuriosa-visa-std = { path = "../std" }\n'), true);
  assert.equal(manifestUsesVisa('[dependencies]\nfuriosa_visa_std = "0.3"\n'), true);
  assert.equal(manifestUsesVisa('[dependencies]\nserde = "1"\n# furiosa-visa-std = "0.3"\n'), false);
});

test('a manifest depending on furiosa-opt-std, the library of today', () => {
  assert.equal(manifestUsesVisa('[dependencies]\nfuriosa-opt-std = "0.6"\n'), true);
  assert.equal(manifestUsesVisa('[dependencies]\nstd06 = { package = "furiosa-opt-std", version = "0.6" }\n'), true);
  assert.equal(manifestUsesVisa('[dependencies]\nfuriosa-opt = "0.6"\n'), false);
});

test('a source that uses the crate', () => {
  assert.equal(sourceUsesVisa('use furiosa_visa_std::prelude::*;\n'), true);
  assert.equal(sourceUsesVisa('fn main() { println!("furiosa_visa_stdx"); }'), false);
  assert.equal(sourceUsesVisa('use furiosa_opt_std::prelude::*;\n'), true);
});
