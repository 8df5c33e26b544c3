'use strict';

// `npm run test:install`: the package as an application gets it. `npm pack`
// (whose prepack script builds the prebuild), then the tarball installed
// into a scratch application on a PATH with node, npm and sh only: no C or
// C++ compiler, no make, no Python.
//
// - With the prebuild: nothing is compiled (no build/ directory), the addon
//   loads from prebuilds/ on every Node from 18 to 26 that is installed
//   (`node scripts/node-versions.js 18 22 24 26`), and res.fastEnd() takes
//   the fast path with res.end()'s bytes.
// - Without it (the same tarball, prebuilds/ taken out): the compile fails,
//   the install still succeeds with a warning, `native` is false,
//   `loadError` says why, and res.fastEnd() sends res.end()'s bytes on
//   Node's own path. FAST_RESPONSE_BUILD=require, or running the install
//   script as the root package (a clone), makes the same failure fail.
//
// Offline: the scratch application is installed with `npm ci --offline`
// from a lockfile that names node-addon-api and node-gyp-build as this
// repository's package-lock.json does, so npm takes them from its cache,
// where the repository's own `npm install` put them.
//
// Not part of `npm test`, which runs each suite file once per Node version:
// this one packs the repository and installs once, and runs each Node
// itself (about 5 s). .ci/run runs it after `npm test`.

const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { nodeBinary } = require('../scripts/node-versions');

const root = path.join(__dirname, '..');
const pkg = require('../package.json');
const lock = require('../package-lock.json');
const tuple = `${process.platform}-${process.arch}`;
// scripts/prebuild.js names the C library on Linux, as node-gyp-build tells it.
const libc = fs.existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
const prebuildName = process.platform === 'linux' ? `${pkg.name}.${libc}.node` : `${pkg.name}.node`;
const STEP_TIMEOUT = 180000;
const MAJORS = [18, 20, 22, 24, 26];

let tmp;

function run(cmd, args, options) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: STEP_TIMEOUT, maxBuffer: 64 << 20, ...options });
  if (r.error) throw r.error;
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

function which(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.realpathSync(file);
    } catch {
      // not here
    }
  }
  throw new Error(`${name} is not on PATH`);
}

// A bin directory with node, npm and sh only, and an environment without
// compiler or Python variables: what a machine without a build toolchain
// has. npm's own scripts need sh (npm's node-gyp shim is a shell script).
function bareEnvironment() {
  const bin = path.join(tmp, 'bin');
  fs.mkdirSync(bin);
  fs.symlinkSync(process.execPath, path.join(bin, 'node'));
  fs.symlinkSync(process.env.npm_execpath && /npm-cli\.js$/.test(process.env.npm_execpath)
    ? process.env.npm_execpath : which('npm'), path.join(bin, 'npm'));
  fs.symlinkSync(which('sh'), path.join(bin, 'sh'));
  const env = { HOME: os.homedir(), PATH: bin, TMPDIR: os.tmpdir(), LANG: 'C' };
  // The npm cache the repository's install filled.
  if (process.env.npm_config_cache) env.npm_config_cache = process.env.npm_config_cache;
  return env;
}

// A scratch application that depends on the tarball, with a lockfile so
// that `npm ci --offline` needs nothing but npm's cache.
function makeApp(name, tarball) {
  const app = path.join(tmp, name);
  fs.mkdirSync(app);
  const spec = `file:${tarball}`;
  const manifest = { name: `scratch-${name}`, version: '1.0.0', private: true, dependencies: { [pkg.name]: spec } };
  const packages = {
    '': { name: manifest.name, version: manifest.version, dependencies: manifest.dependencies },
    [`node_modules/${pkg.name}`]: {
      version: pkg.version, resolved: spec, hasInstallScript: true, dependencies: pkg.dependencies,
    },
  };
  for (const dep of Object.keys(pkg.dependencies)) {
    const entry = lock.packages[`node_modules/${dep}`];
    assert.ok(entry, `${dep} in package-lock.json`);
    packages[`node_modules/${dep}`] = entry;
  }
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify(manifest, null, 2));
  fs.writeFileSync(path.join(app, 'package-lock.json'),
                   JSON.stringify({ name: manifest.name, version: manifest.version, lockfileVersion: 3,
                                    requires: true, packages }, null, 2));
  fs.copyFileSync(path.join(__dirname, 'fixtures', 'packed-check.js'), path.join(app, 'check.js'));
  return app;
}

function npmCi(app, env) {
  return run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--foreground-scripts', '--ignore-scripts=false'],
             { cwd: app, env });
}

// Serves one response with res.end() and one with res.fastEnd() from the
// installed package, on the given Node (test/fixtures/packed-check.js).
function check(app, env, node = process.execPath) {
  const r = run(node, ['check.js'], { cwd: app, env });
  assert.equal(r.status, 0, r.output);
  return JSON.parse(r.output);
}

function assertSameBytes(out) {
  assert.match(out.node, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(out.node, /\r\nContent-Length: 5\r\n/);
  assert.ok(out.node.endsWith('\r\n\r\nhello'), JSON.stringify(out.node));
  assert.equal(out.fast, out.node, 'res.fastEnd() sends res.end()\'s bytes (Date masked)');
}

/** The bytes of the fast response: the masked Date was 29 characters. */
function fastBytes(out) {
  return Buffer.byteLength(out.fast, 'latin1') - '-'.length + 'Thu, 01 Jan 1970 00:00:00 GMT'.length;
}

function nodes() {
  const own = Number(process.versions.node.split('.')[0]);
  return MAJORS.map((major) => ({
    major, bin: major === own ? process.execPath : nodeBinary(major),
  }));
}

let env;
let withPrebuild;
let withoutPrebuild;
let packOutput;
const started = Date.now();

before(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fast-response-packed-')));
  // `npm pack` as a release makes it: its prepack script builds the prebuild.
  const packed = run('npm', ['pack', '--pack-destination', tmp], { cwd: root });
  packOutput = packed.output;
  assert.equal(packed.status, 0, packed.output);
  withPrebuild = path.join(tmp, `${pkg.name}-${pkg.version}.tgz`);
  assert.ok(fs.existsSync(withPrebuild), packed.output);

  // The same tarball without prebuilds/.
  const unpacked = path.join(tmp, 'unpacked');
  fs.mkdirSync(unpacked);
  assert.equal(run('tar', ['xzf', withPrebuild, '-C', unpacked]).status, 0);
  fs.rmSync(path.join(unpacked, 'package', 'prebuilds'), { recursive: true, force: true });
  withoutPrebuild = path.join(tmp, `${pkg.name}-${pkg.version}-no-prebuild.tgz`);
  assert.equal(run('tar', ['czf', withoutPrebuild, '-C', unpacked, 'package']).status, 0);

  env = bareEnvironment();
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('npm pack', () => {
  test('builds the prebuild and ships it with the install script; no build/', () => {
    assert.match(packOutput, /> fast-response@[^ ]+ prepack/);
    const prebuilt = fs.readdirSync(path.join(root, 'prebuilds', tuple));
    assert.deepEqual(prebuilt, [prebuildName]);
    assert.ok(fs.statSync(path.join(root, 'prebuilds', tuple, prebuilt[0])).mtimeMs >= started - 2000,
              'the prebuild was made by this npm pack');
    const files = run('tar', ['tzf', withPrebuild]).output.split('\n').filter(Boolean);
    assert.ok(files.includes(`package/prebuilds/${tuple}/${prebuildName}`), files.join('\n'));
    assert.ok(files.includes('package/scripts/install.js'));
    assert.ok(files.includes('package/binding.gyp'), 'the sources, to compile where no prebuild fits');
    assert.deepEqual(files.filter((f) => /^package\/build\//.test(f)), []);
  });

  test('the scratch installs run without a compiler, make or Python on PATH', () => {
    assert.deepEqual(fs.readdirSync(env.PATH).sort(), ['node', 'npm', 'sh']);
    for (const name of ['CC', 'CXX', 'PYTHON', 'npm_config_python', 'NODE_GYP_FORCE_PYTHON']) {
      assert.equal(env[name], undefined);
    }
  });
});

describe('installed with its prebuild', () => {
  let app;
  let install;

  before(() => {
    app = makeApp('with-prebuild', withPrebuild);
    install = npmCi(app, env);
  });

  test('npm ci succeeds and compiles nothing: no build/ directory', () => {
    assert.equal(install.status, 0, install.output);
    const installed = path.join(app, 'node_modules', pkg.name);
    assert.ok(fs.existsSync(path.join(installed, 'prebuilds', tuple, prebuildName)));
    assert.equal(fs.existsSync(path.join(installed, 'build')), false, install.output);
    assert.doesNotMatch(install.output, /gyp info spawn make|could not be built/);
  });

  // A Node that scripts/node-versions.js did not install is skipped, except
  // in CI (CI=true), where .ci/run installs them all.
  for (const { major, bin } of nodes()) {
    const skip = fs.existsSync(bin) || process.env.CI ? false : `not installed: node scripts/node-versions.js ${major}`;
    test(`Node ${major}: the prebuild loads, native === true, res.fastEnd() is fast with res.end()'s bytes`, { skip }, () => {
      assert.equal(install.status, 0, install.output);
      const out = check(app, env, bin);
      assert.equal(out.version.split('.')[0], `v${major}`);
      assert.equal(out.loadError, null);
      assert.equal(out.native, true);
      assert.equal(out.addon, path.join(app, 'node_modules', pkg.name, 'prebuilds', tuple, prebuildName));
      assertSameBytes(out);
      assert.deepEqual(out.stats, { fast: 1, partial: 0, writes: 0, heads: 0, uncorks: { framed: 0, joined: 0 }, fallback: 0, reasons: {}, writev: { calls: 1, bytes: fastBytes(out) },
        requests: { fast: 0, partial: 0, fallback: 0, reasons: {} } });
    });
  }
});

describe('installed without a prebuild, nothing to compile with', () => {
  let app;
  let install;

  before(() => {
    app = makeApp('without-prebuild', withoutPrebuild);
    install = npmCi(app, env);
  });

  test('npm ci succeeds: the failed compile is a warning', () => {
    assert.equal(install.status, 0, install.output);
    // node-gyp-build did try to compile, and node-gyp failed for want of Python.
    assert.match(install.output, /Could not find any Python installation/);
    assert.match(install.output, /fast-response: WARNING: the native addon could not be built/);
    assert.ok(fs.existsSync(path.join(app, 'node_modules', pkg.name, 'lib', 'index.js')));
  });

  test('native === false, loadError says why, and res.fastEnd() sends res.end()\'s bytes on Node\'s path', () => {
    assert.equal(install.status, 0, install.output);
    const out = check(app, env);
    assert.equal(out.native, false);
    assert.equal(out.addon, null);
    assert.match(out.loadError,
                 new RegExp(`^No native build was found for platform=${process.platform} arch=${process.arch} runtime=node `));
    assert.match(out.loadError, new RegExp(`loaded from: ${path.join(app, 'node_modules', pkg.name)}`));
    assertSameBytes(out);
    assert.deepEqual(out.stats, { fast: 0, partial: 0, writes: 0, heads: 0, uncorks: { framed: 0, joined: 0 }, fallback: 1, reasons: { 'no-addon': 1 }, writev: { calls: 0, bytes: 0 },
      requests: { fast: 0, partial: 0, fallback: 0, reasons: {} } });
  });

  test('FAST_RESPONSE_BUILD=require: the same failed compile fails `npm rebuild`', () => {
    const r = run('npm', ['rebuild', pkg.name, '--foreground-scripts'],
                  { cwd: app, env: { ...env, FAST_RESPONSE_BUILD: 'require' } });
    assert.notEqual(r.status, 0, r.output);
    assert.match(r.output, /fast-response: the native addon could not be built \(node-gyp-build exited with code 1\)/);
    assert.doesNotMatch(r.output, /WARNING/);
  });

  test('as the root package (npm install in a clone), the failed compile fails the install script', () => {
    const installed = path.join(app, 'node_modules', pkg.name);
    const strict = run('npm', ['run', 'install'], { cwd: installed, env });
    assert.notEqual(strict.status, 0, strict.output);
    assert.match(strict.output, /fast-response: the native addon could not be built/);
    // ... unless FAST_RESPONSE_BUILD=optional says otherwise.
    const optional = run('npm', ['run', 'install'], { cwd: installed, env: { ...env, FAST_RESPONSE_BUILD: 'optional' } });
    assert.equal(optional.status, 0, optional.output);
    assert.match(optional.output, /fast-response: WARNING: the native addon could not be built/);
  });
});
