'use strict';

// lib/index.d.ts against TypeScript: the README's usage compiles under
// --strict, and each misuse in test/types/misuse.ts is an error.

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const dir = path.join(__dirname, 'types');
const tsc = require.resolve('typescript/bin/tsc');

function compile(args) {
  return spawnSync(process.execPath, [tsc, ...args], { cwd: dir, encoding: 'utf8' });
}

test('the documented API type-checks under --strict', () => {
  const r = compile(['-p', 'tsconfig.json']);
  assert.strictEqual(r.status, 0, r.stdout + r.stderr);
});

test('each misuse of the API is a type error', () => {
  const r2 = compile(['-p', 'tsconfig.misuse.json']);
  const errors = (r2.stdout.match(/misuse\.ts\(\d+,\d+\): error TS/g) || []).length;
  const lines = (r2.stdout.match(/misuse\.ts\((\d+),/g) || []).map((m) => m.match(/\((\d+),/)[1]);
  assert.notStrictEqual(r2.status, 0);
  assert.deepStrictEqual([...new Set(lines)].map(Number), [6, 7, 8, 9, 10, 11], r2.stdout);
  assert.ok(errors >= 6);
});
