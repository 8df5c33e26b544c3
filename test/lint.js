'use strict';

// `npm run lint`: ESLint over the JavaScript, and clang-format (the root
// .clang-format) over the C++ when clang-format is installed.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { REQUIRED } = require('./helpers/native-tools');

const root = path.join(__dirname, '..');
let ok = true;

const eslint = spawnSync(process.execPath,
                         [path.join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'), '.'],
                         { cwd: root, stdio: 'inherit' });
ok = eslint.status === 0 && ok;

function cxxFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'corpus' ? [] : cxxFiles(full);
    return /\.(cc|h)$/.test(e.name) ? [full] : [];
  });
}

const files = ['src', 'test/native', 'test/fuzz', 'benchmark/native']
  .flatMap((d) => cxxFiles(path.join(root, d)));
const format = spawnSync('clang-format', ['--dry-run', '--Werror', ...files],
                         { cwd: root, stdio: 'inherit' });
if (format.error && REQUIRED) {
  console.error('clang-format not found (FAST_RESPONSE_NATIVE=require): install it (apt-get install clang-format)');
  ok = false;
} else if (format.error) {
  console.log('clang-format not found: C++ formatting not checked (FAST_RESPONSE_NATIVE=require fails instead)');
} else {
  ok = format.status === 0 && ok;
}
// Every mutant of the mutation check still applies (its code not moved).
const mutants = spawnSync(process.execPath, [path.join(root, 'scripts', 'mutation-check.js'), '--applies'],
                          { cwd: root, stdio: 'inherit' });
ok = mutants.status === 0 && ok;

console.log(ok ? 'lint: clean' : 'lint: FAILED');
process.exit(ok ? 0 : 1);
