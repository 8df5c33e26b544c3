'use strict';

// `npm test`: the JavaScript suites (node:test) on this Node and on each of
// Node 18, 22, 24 and 26 that `node scripts/node-versions.js` installed
// (.ci/run installs all four: the differential suites run on Node 18 to 26,
// where res.write() and res.uncork() take different paths); then the
// GoogleTest suite of src/ (test/native/). Exits non-zero when any part
// fails.
//
// Environment:
//   FAST_RESPONSE_NODES   extra Node binaries to run the JS suites with,
//                         separated by ':' (default: the installed ones
//                         above)
//   FAST_RESPONSE_NATIVE  'skip' to leave out the native suite; 'require' to
//                         fail when CMake or GoogleTest are missing (CI)

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const { nodeBinary } = require('../scripts/node-versions');

const root = path.join(__dirname, '..');
// The Node versions the suites also run on when installed: the package's
// range (engines: >=18), one of each release line whose paths differ.
const EXTRA_MAJORS = [18, 22, 24, 26];

function testFiles(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'native' && entry.name !== 'fixtures') out.push(...testFiles(full));
    } else if (entry.name.endsWith('.test.js')) {
      out.push(full);
    }
  }
  return out.sort();
}

function nodes() {
  const list = [process.execPath];
  const extra = process.env.FAST_RESPONSE_NODES;
  if (extra !== undefined) {
    list.push(...extra.split(':').filter(Boolean));
  } else {
    const running = Number(process.versions.node.split('.')[0]);
    const missing = [];
    for (const major of EXTRA_MAJORS) {
      if (major === running) continue;
      const binary = nodeBinary(major);
      if (fs.existsSync(binary)) list.push(binary);
      else missing.push(major);
    }
    if (missing.length !== 0) {
      console.log(`Node ${missing.join(', ')} not installed: run \`node scripts/node-versions.js ` +
                  `${missing.join(' ')}\` to test on ${missing.length === 1 ? 'it' : 'them'} too.`);
    }
  }
  return list;
}

function run(cmd, args, label) {
  console.log(`\n== ${label} ==`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.error) {
    console.error(r.error.message);
    return false;
  }
  return r.status === 0;
}

const files = testFiles(__dirname).map((f) => path.relative(root, f));
let ok = true;
for (const node of nodes()) {
  const version = spawnSync(node, ['-v'], { encoding: 'utf8' }).stdout.trim();
  ok = run(node, ['--test', '--test-reporter=spec', ...files],
           `JavaScript suites on Node ${version} (${node})`) && ok;
}
if (process.env.FAST_RESPONSE_NATIVE !== 'skip' &&
    fs.existsSync(path.join(__dirname, 'native', 'run.js'))) {
  ok = run(process.execPath, [path.join(__dirname, 'native', 'run.js')],
           'GoogleTest suite of src/ (test/native/: head, message, writer, layout, socket_write, utf8)') && ok;
}
console.log(ok ? '\nall suites passed' : '\nsome suites FAILED');
process.exit(ok ? 0 : 1);
