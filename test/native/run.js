'use strict';

// The GoogleTest suite of src/head and src/socket_write (test/native/*.cc):
// configures it with CMake into build-native/ at the package root, builds it
// and runs ctest. Exits with ctest's status.
//
//   node test/native/run.js              build, ctest --output-on-failure
//   node test/native/run.js --valgrind   build, then run the test binary under
//                                        valgrind memcheck (leaks are errors)
//
// Environment:
//   FAST_RESPONSE_NATIVE  'require': CMake, a C++ compiler or GoogleTest
//                         missing (or valgrind, with --valgrind) is a failure
//                         (CI sets it); otherwise a notice and exit 0.
//   FAST_RESPONSE_JOBS    parallel build jobs (default 2)

const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const buildDir = path.join(root, 'build-native');
const { missingTool } = require('../helpers/native-tools');
const valgrind = process.argv.includes('--valgrind');
const jobs = process.env.FAST_RESPONSE_JOBS || '2';

function have(cmd, args = ['--version']) {
  const r = spawnSync(cmd, args, { stdio: 'ignore' });
  return !r.error && r.status === 0;
}

// A missing tool: a notice, or a failure under FAST_RESPONSE_NATIVE=require.
function missing(what) {
  missingTool('test/native', `${what} is missing`,
              `apt-get install -y cmake g++ libgtest-dev${valgrind ? ' valgrind' : ''}`);
}

function run(cmd, args, opts = {}) {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) {
    console.error(r.error.message);
    return 1;
  }
  return r.status === null ? 1 : r.status;
}

if (!have('cmake')) missing('CMake');
if (!have('ctest')) missing('ctest (CMake)');
if (valgrind && !have('valgrind')) missing('valgrind');

// Configure. A failure that names GTest means GoogleTest is not installed.
console.log(`$ cmake -S test/native -B build-native`);
const configure = spawnSync('cmake', ['-S', __dirname, '-B', buildDir], {
  cwd: root,
  encoding: 'utf8',
});
process.stdout.write(configure.stdout || '');
process.stderr.write(configure.stderr || '');
if (configure.error || configure.status !== 0) {
  const text = `${configure.stdout}\n${configure.stderr}`;
  if (/GTest|GoogleTest/.test(text)) missing('GoogleTest (libgtest-dev)');
  if (/CMAKE_CXX_COMPILER|No CMAKE_CXX_COMPILER/.test(text)) missing('a C++ compiler');
  console.error('test/native: cmake configure failed');
  process.exit(1);
}

let status = run('cmake', ['--build', buildDir, '--parallel', jobs]);
if (status !== 0) {
  console.error('test/native: build failed');
  process.exit(status);
}

if (valgrind) {
  status = run('valgrind', [
    '--error-exitcode=1',
    '--leak-check=full',
    '--errors-for-leak-kinds=definite,indirect,possible',
    '--track-origins=yes',
    path.join(buildDir, 'native_tests'),
  ]);
} else {
  status = run('ctest', ['--test-dir', buildDir, '--output-on-failure']);
}
process.exit(status);
