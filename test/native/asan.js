'use strict';

// `npm run test:asan`: builds the addon with AddressSanitizer and
// UndefinedBehaviorSanitizer (clang) into build-asan/ (a copy of binding.gyp
// and src/, so build/Release/fast_response.node stays as it is), then runs
// test/native/asan-smoke.js and the JavaScript suites (test/*.test.js) with
// the ASan runtime preloaded into node and FAST_RESPONSE_ADDON pointing at
// the sanitized addon (lib/binding.js). Leak detection is off: V8 does not
// free everything at exit, by design. Run by a Node older than 24, it then
// runs the suites that reach the calls only Node 24 and later make
// (NODE_24_SUITES) with the cached Node 26 too, when it is installed.
//
// Sanitizer reports go to build-asan/reports/ and are printed at the end; a
// report fails the run, as does a failing suite.
//
//   node test/native/asan.js            smoke test and JS suites
//   node test/native/asan.js --smoke    smoke test only
//
// Needs clang and its sanitizer runtimes (Debian: clang libclang-rt-14-dev).
// Missing: a notice and exit 0, or exit 1 with FAST_RESPONSE_NATIVE=require.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const out = path.join(root, 'build-asan');
const pkg = path.join(out, 'pkg');
const reports = path.join(out, 'reports');
const { missingTool } = require('../helpers/native-tools');
const { nodeBinary } = require('../../scripts/node-versions');
// The suites that reach the addon's Node 24+ calls (writeChunks(), writeChunk()).
const NODE_24_SUITES = ['stream', 'chunked-buffer', 'peer-faults', 'backpressure']
  .map((name) => path.join('test', `${name}.test.js`));
const smokeOnly = process.argv.includes('--smoke');

function missing(what) {
  missingTool('test:asan', what, 'apt-get install -y clang libclang-rt-14-dev');
}

function run(cmd, args, opts = {}) {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error && r.error.code === 'ETIMEDOUT') {
    console.error(`test:asan: killed after ${opts.timeout / 1000} s`);
    return 1;
  }
  if (r.error) {
    console.error(r.error.message);
    return 1;
  }
  return r.status === null ? 1 : r.status;
}

// --- the toolchain -----------------------------------------------------------
const cc = process.env.ASAN_CC || 'clang';
const cxx = process.env.ASAN_CXX || 'clang++';
const rt = spawnSync(cc, ['-print-file-name=libclang_rt.asan-x86_64.so'], { encoding: 'utf8' });
if (rt.error) missing(`${cc} is not installed`);
const runtime = rt.stdout.trim();
if (!path.isAbsolute(runtime) || !fs.existsSync(runtime)) {
  missing('the ASan runtime libclang_rt.asan-x86_64.so is missing');
}

// node-gyp: the one npm runs scripts with, else npm's own copy, else PATH.
const npmGyp = path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules',
                         'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
const gyp = [process.env.npm_config_node_gyp, npmGyp].find((p) => p && fs.existsSync(p));
const gypCmd = gyp ? [process.execPath, gyp] : ['node-gyp'];
// Node's headers where this node is installed, if they are there.
const nodedir = path.join(path.dirname(process.execPath), '..');
const gypArgs = ['rebuild', '--jobs=2'];
if (fs.existsSync(path.join(nodedir, 'include', 'node', 'node_api.h'))) {
  gypArgs.push(`--nodedir=${path.resolve(nodedir)}`);
}

// --- build a copy --------------------------------------------------------------
fs.rmSync(pkg, { recursive: true, force: true });
fs.mkdirSync(pkg, { recursive: true });
fs.copyFileSync(path.join(root, 'binding.gyp'), path.join(pkg, 'binding.gyp'));
fs.cpSync(path.join(root, 'src'), path.join(pkg, 'src'), { recursive: true });

const sanitize = '-fsanitize=address,undefined -fno-sanitize-recover=all ' +
                 '-fno-omit-frame-pointer -g';
const buildEnv = {
  ...process.env,
  CC: cc,
  CXX: cxx,
  CFLAGS: sanitize,
  CXXFLAGS: sanitize,
  // The runtime comes from LD_PRELOAD: link against the shared one.
  LDFLAGS: '-fsanitize=address,undefined -shared-libasan',
};
let status = run(gypCmd[0], [...gypCmd.slice(1), ...gypArgs], { cwd: pkg, env: buildEnv });
if (status !== 0) {
  console.error('test:asan: the sanitizer build failed');
  process.exit(status);
}
const addon = path.join(pkg, 'build', 'Release', 'fast_response.node');
if (!fs.existsSync(addon)) {
  console.error(`test:asan: ${addon} was not built`);
  process.exit(1);
}
const nm = spawnSync('nm', ['-u', addon], { encoding: 'utf8' });
if (!nm.error && !/__asan_/.test(nm.stdout)) {
  console.error('test:asan: the addon has no ASan instrumentation');
  process.exit(1);
}

// --- run -----------------------------------------------------------------------
fs.rmSync(reports, { recursive: true, force: true });
fs.mkdirSync(reports, { recursive: true });
const runEnv = {
  ...process.env,
  FAST_RESPONSE_ADDON: addon,
  LD_PRELOAD: runtime,
  // V8 installs its own SIGSEGV handler (WebAssembly traps).
  ASAN_OPTIONS: `detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:` +
                `abort_on_error=0:halt_on_error=1:log_path=${path.join(reports, 'asan')}`,
  UBSAN_OPTIONS: `print_stacktrace=1:halt_on_error=1:log_path=${path.join(reports, 'ubsan')}`,
};

const results = [];
status = run(process.execPath, [path.join(__dirname, 'asan-smoke.js')], { env: runEnv });
results.push(['asan-smoke.js', status]);

if (!smokeOnly) {
  // One process per file, run directly (node:test runs it in-process), so
  // that a file that hangs can be killed after FAST_RESPONSE_ASAN_TIMEOUT
  // seconds (default 900: everything is several times slower under ASan).
  const timeout = 1000 * Number(process.env.FAST_RESPONSE_ASAN_TIMEOUT || 900);
  const files = fs.readdirSync(path.join(root, 'test'))
    .filter((f) => f.endsWith('.test.js'))
    .sort()
    .map((f) => path.join('test', f));
  for (const file of files) {
    // load-small bounds the server's RSS growth to 20 MiB; ASan's quarantine
    // alone keeps up to 256 MB of freed memory resident. The same load run
    // (every response byte-exact, descriptors, socket errors) with the bound
    // raised instead.
    const load = file === path.join('test', 'load-small.test.js');
    const args = load
      ? [path.join(root, 'scripts', 'load.js'), '--connections', '100',
         '--requests', '5000', '--rss-limit', '512', '--timeout', '600']
      : ['--test-reporter=spec', file];
    const name = load ? `${file} (as scripts/load.js --rss-limit 512)` : file;
    status = run(process.execPath, args, { env: runEnv, timeout, killSignal: 'SIGKILL' });
    results.push([name, status]);
  }
  // The native calls only Node 24 and later reach (writeChunks() and
  // writeChunk(): the chunks Node collects in a tick): the suites that
  // drive them, again with the cached Node 26 (scripts/node-versions.js
  // 26) when this Node is older.
  const later = nodeBinary(26);
  if (Number(process.versions.node.split('.')[0]) < 24 && fs.existsSync(later)) {
    for (const file of NODE_24_SUITES) {
      status = run(later, ['--test-reporter=spec', file], { env: runEnv, timeout, killSignal: 'SIGKILL' });
      results.push([`${file} (Node 26)`, status]);
    }
  } else if (Number(process.versions.node.split('.')[0]) < 24) {
    console.log(`test:asan: ${later} is not installed: the Node 24+ native calls are not run ` +
                '(node scripts/node-versions.js 26)');
  }
}

const found = fs.readdirSync(reports);
for (const f of found) {
  console.error(`\n== sanitizer report ${f} ==`);
  console.error(fs.readFileSync(path.join(reports, f), 'utf8'));
}
console.log('\n== test:asan ==');
for (const [name, s] of results) console.log(`${s === 0 ? 'ok  ' : 'FAIL'} ${name}`);
console.log(found.length === 0 ? 'no sanitizer reports' : `${found.length} sanitizer report(s)`);
process.exit(found.length === 0 && results.every(([, s]) => s === 0) ? 0 : 1);
