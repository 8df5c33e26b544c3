'use strict';

// npm's `install` script. node-gyp-build does the work: when a prebuild in
// prebuilds/ loads on this Node, nothing is compiled; otherwise it runs
// `node-gyp rebuild`. In a clone of this repository (`npm install` there:
// npm's root package is this package) the addon is always compiled from
// the sources, into build/Release, whatever prebuilds/ holds.
//
// When that compile fails (no C++ compiler, no make, no Python, no Node
// headers), an application that depends on this package must still
// install: the package then runs every call on Node's own path,
// `require('fast-response').native` is false and `.loadError` says why the
// addon could not load. So as a dependency the failure is a warning and the
// script exits 0. In a clone the failure fails the install, as a developer
// needs it to. (test/packed-install.js tests each case.)
//
// FAST_RESPONSE_BUILD overrides the choice:
//   require   a failed build fails the install, as a dependency too (for an
//             application that must not run without the addon)
//   optional  a failed build never fails the install, in a clone too

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const pkgDir = path.join(__dirname, '..');

function realpath(p) {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

// npm runs a package's scripts with npm_config_local_prefix set to the
// folder of the project npm was run for: this package's own folder when
// `npm install` (or `npm ci`, `npm rebuild`) runs in a clone, the
// application's folder when this package is installed as its dependency
// (linked from a folder or copied into node_modules alike).
function isRootPackage(env) {
  const prefix = env.npm_config_local_prefix || env.INIT_CWD;
  return prefix !== undefined && prefix !== '' && realpath(prefix) === realpath(pkgDir);
}

// Whether a failed build fails the install.
function mustBuild(env) {
  const mode = env.FAST_RESPONSE_BUILD;
  if (mode === 'require') return true;
  if (mode === 'optional') return false;
  if (mode !== undefined && mode !== '') {
    console.error(`fast-response: FAST_RESPONSE_BUILD=${mode} is neither 'require' nor 'optional'; ignored`);
  }
  return isRootPackage(env);
}

function main() {
  const strict = mustBuild(process.env);
  const env = { ...process.env };
  // node-gyp-build's own switch (npm install --build-from-source sets it).
  if (isRootPackage(env)) env.npm_config_build_from_source = 'true';
  let result;
  try {
    const bin = require.resolve('node-gyp-build/bin.js', { paths: [pkgDir] });
    result = spawnSync(process.execPath, [bin], { cwd: pkgDir, env, stdio: 'inherit' });
  } catch (err) {
    result = { error: err };
  }
  if (!result.error && result.status === 0) return 0;

  const why = result.error ? result.error.message
    : result.signal ? `node-gyp-build was killed by ${result.signal}`
      : `node-gyp-build exited with code ${result.status}`;
  if (strict) {
    console.error(`\nfast-response: the native addon could not be built (${why}); see the output above.`);
    return typeof result.status === 'number' && result.status !== 0 ? result.status : 1;
  }
  console.error([
    '',
    `fast-response: WARNING: the native addon could not be built (${why}); see the output above.`,
    'fast-response: the package is installed and works without it: every call takes Node\'s own',
    'fast-response: res.end() path, not faster. require(\'fast-response\').native is false and',
    'fast-response: .loadError says why. To have it, install a C++17 compiler, make and Python and',
    'fast-response: run `npm rebuild fast-response`; FAST_RESPONSE_BUILD=require makes this failure',
    'fast-response: fail the install instead.',
  ].join('\n'));
  return 0;
}

process.exitCode = main();
