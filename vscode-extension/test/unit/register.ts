// Makes `require('vscode')` load the mock (the real module exists only inside VS Code).
import Module = require('module');
import * as path from 'path';

const mock = path.join(__dirname, 'vscode.js');
const m = Module as unknown as {
  _resolveFilename(request: string, ...rest: unknown[]): string;
};
const original = m._resolveFilename;
m._resolveFilename = function (request: string, ...rest: unknown[]): string {
  if (request === 'vscode') return mock;
  return original.call(this, request, ...rest);
};
