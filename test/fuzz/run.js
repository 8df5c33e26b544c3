'use strict';

// libFuzzer run of test/fuzz/head_fuzzer.cc (the addon's head pipeline in
// src/head, src/message and src/writer against _storeHeader() and
// http_parser).
// Builds with clang into build-fuzz/ and fuzzes from the committed seeds in
// test/fuzz/corpus/ (read only); new inputs go to build-fuzz/corpus/, crash
// reproducers to build-fuzz/crash-*.
//
//   node test/fuzz/run.js                 60 s (npm run fuzz)
//   node test/fuzz/run.js --long          30 min (npm run fuzz:long)
//   node test/fuzz/run.js --seconds=N     N seconds
//   node test/fuzz/run.js -- FILE...      run the given inputs once (a crash
//                                         reproducer), no fuzzing
//
// Needs clang with libFuzzer and the sanitizer runtimes (Debian:
// clang libclang-rt-14-dev) and http_parser (libhttp-parser-dev). Missing:
// a notice and exit 0, or exit 1 with FAST_RESPONSE_NATIVE=require.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const out = path.join(root, 'build-fuzz');
const binary = path.join(out, 'head_fuzzer');
const { missingTool } = require('../helpers/native-tools');
const clang = process.env.CXX_FUZZ || 'clang++';

const args = process.argv.slice(2);
const dash = args.indexOf('--');
const reproduce = dash >= 0 ? args.slice(dash + 1) : [];
const options = dash >= 0 ? args.slice(0, dash) : args;
let seconds = 60;
for (const a of options) {
  if (a === '--long') seconds = 1800;
  else if (a.startsWith('--seconds=')) seconds = Number(a.slice(10));
  else {
    console.error(`test/fuzz: unknown option ${a}`);
    process.exit(2);
  }
}

function missing(what) {
  missingTool('test/fuzz', what, 'apt-get install -y clang libclang-rt-14-dev libhttp-parser-dev');
}

function run(cmd, argv) {
  console.log(`$ ${cmd} ${argv.map((a) => path.isAbsolute(a) ? path.relative(root, a) || '.' : a).join(' ')}`);
  const r = spawnSync(cmd, argv, { cwd: root, stdio: 'inherit' });
  if (r.error) {
    console.error(r.error.message);
    return 1;
  }
  return r.status === null ? 1 : r.status;
}

fs.mkdirSync(path.join(out, 'corpus'), { recursive: true });

// Probe the toolchain with a one-line target before building the real one.
const probe = path.join(out, 'probe.cc');
fs.writeFileSync(probe, '#include <http_parser.h>\n' +
  'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long)' +
  ' { return http_parser_version() == 0; }\n');
const p = spawnSync(clang, ['-fsanitize=fuzzer,address,undefined', probe,
  '-lhttp_parser', '-o', path.join(out, 'probe')], { encoding: 'utf8' });
if (p.error) missing(`${clang} is not installed`);
if (p.status !== 0) {
  if (/http_parser/.test(p.stderr)) missing('http_parser (libhttp-parser-dev) is missing');
  missing(`${clang} cannot link -fsanitize=fuzzer,address,undefined:\n${p.stderr}`);
}

const src = path.join(root, 'src');
let status = run(clang, [
  '-std=c++17', '-g', '-O1', '-Wall', '-Wextra', '-Werror',
  '-fsanitize=fuzzer,address,undefined', '-fno-sanitize-recover=all',
  `-I${src}`,
  // The addon's pipeline as src/addon.cc calls it (addon.cc itself needs
  // Node-API and stays out).
  ...['head.cc', 'message.cc', 'writer.cc', 'socket_write.cc'].map((f) => path.join(src, f)),
  path.join(__dirname, 'head_fuzzer.cc'),
  '-lhttp_parser', '-o', binary,
]);
if (status !== 0) process.exit(status);

if (reproduce.length > 0) {
  process.exit(run(binary, reproduce));
}
status = run(binary, [
  path.join(out, 'corpus'), path.join(__dirname, 'corpus'),
  `-dict=${path.join(__dirname, 'head.dict')}`,
  `-max_total_time=${seconds}`,
  `-artifact_prefix=${out}${path.sep}`,
  '-print_final_stats=1',
]);
process.exit(status);
