'use strict';

// `npm run prebuild`: the prebuilt addon for this platform,
// prebuilds/<platform>-<arch>/fast-response[.<libc>].node, with prebuildify:
// one Node-API build (binding.gyp sets NAPI_VERSION=8) that every Node from
// 18 on loads, stripped, and on Linux tagged with its C library
// (fast-response.glibc.node) so that node-gyp-build never hands a glibc
// build to a musl Node (or the reverse). `npm pack` and
// `npm publish` run it first (the `prepack` script), so a tarball always
// carries a prebuild of the very sources it ships.
//
// The build runs in a scratch copy of the files the package ships
// (package.json "files": binding.gyp, src/, ...), so the development build
// in build/ stays as it was (prebuildify runs `node-gyp rebuild` and moves
// the result away). It compiles against the
// Node headers npm's nodedir names (npm_config_nodedir); when none is set
// and the running Node's own headers are installed beside it
// (<prefix>/include/node, /usr/include/node on this project's machines),
// against those. node-gyp downloads headers only when neither exists.
//
// Run it through npm (`npm run prebuild`): npm puts its own node-gyp on
// PATH, which prebuildify calls.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const prebuildify = require('prebuildify');

const root = path.join(__dirname, '..');
const pkg = require('../package.json');

function nodeDir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  const prefix = path.resolve(path.dirname(process.execPath), '..');
  return fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) ? prefix : null;
}

function onPath(name) {
  return (process.env.PATH || '').split(path.delimiter).some((d) => {
    try {
      fs.accessSync(path.join(d, name), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function main() {
  if (!process.env.PREBUILD_NODE_GYP && !onPath('node-gyp')) {
    console.error('prebuild: node-gyp is not on PATH: run it as `npm run prebuild`');
    process.exit(1);
  }
  const dir = nodeDir();
  if (dir) {
    // prebuildify passes its environment on to node-gyp.
    process.env.npm_config_nodedir = dir;
    console.log(`prebuild: Node headers from ${path.join(dir, 'include', 'node')}`);
  } else {
    console.log('prebuild: no nodedir and no headers beside this Node: node-gyp will download them');
  }

  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-response-prebuild-'));
  const cleanup = () => fs.rmSync(stage, { recursive: true, force: true });
  // What the tarball ships (package.json "files"), as a consumer without a
  // prebuild compiles it.
  for (const entry of pkg.files) {
    const name = entry.replace(/\/$/, '');
    if (name === 'prebuilds' || !fs.existsSync(path.join(root, name))) continue;
    fs.cpSync(path.join(root, name), path.join(stage, name), { recursive: true });
  }
  // binding.gyp asks node for node-addon-api's include directory.
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(stage, 'node_modules'), 'dir');

  const platform = process.env.PREBUILD_PLATFORM || os.platform();
  const arch = process.env.PREBUILD_ARCH || os.arch();
  const out = path.join(root, 'prebuilds', `${platform}-${arch}`);
  // A rebuild replaces this platform's prebuild; other platforms' stay.
  if (fs.existsSync(out)) {
    for (const f of fs.readdirSync(out)) if (f.endsWith('.node')) fs.rmSync(path.join(out, f));
  }

  prebuildify({
    cwd: stage,
    out: root,
    name: pkg.name,
    napi: true,
    // node-gyp's --target: the running Node, whose headers nodedir names
    // (prebuildify's default is the newest Node it knows of).
    targets: [`node@${process.versions.node}`],
    strip: true,
    // On Linux, glibc or musl in the name (elsewhere there is one C library).
    tagLibc: platform === 'linux',
  }, (err) => {
    cleanup();
    if (err) {
      console.error(`prebuild: ${err.message}`);
      process.exit(1);
    }
    for (const f of fs.readdirSync(out)) {
      const { size } = fs.statSync(path.join(out, f));
      console.log(`prebuild: ${path.relative(root, path.join(out, f))} (${size} bytes)`);
    }
  });
}

main();
