'use strict';

// `npm run test:mutation`: does the conformance suite have teeth?
//
// Copies the package (sources, binding.gyp, test/matrix.test.js,
// test/edges.test.js and their harness and helpers; node_modules symlinked) to a
// temporary directory, builds the addon there, checks that the unmutated
// copy passes, then applies one small breaking edit at a time to the copy
// (rebuilding it when the edit is in src/), runs test/matrix.test.js and
// test/edges.test.js there and requires every mutant to be killed: at least
// one test fails. The sources in this repository are never modified.
//
// Prints the table mutant -> killed by matrix / edges, and exits non-zero
// when a mutant survives or an edit no longer applies (the code it targets
// changed: update the mutant).
//
//   node scripts/mutation-check.js [--only name,name] [--keep] [--verbose]
//
// The suites run with FAST_RESPONSE_TEST_BAIL=1 (stop at the first failure)
// and FAST_RESPONSE_TEST_TIMEOUT_MS=15000 (a mutant that hangs connections
// fails sooner).

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const args = process.argv.slice(2);
const keep = args.includes('--keep');
const verbose = args.includes('--verbose');
const onlyAt = args.indexOf('--only');
const only = onlyAt === -1 ? null : new Set(args[onlyAt + 1].split(','));

const COPY = [
  'binding.gyp', 'package.json', 'register.js', 'lib', 'src',
  'test/matrix.test.js', 'test/matrix-harness.js', 'test/edges.test.js', 'test/helpers',
];
const SUITES = { matrix: 'test/matrix.test.js', edges: 'test/edges.test.js' };
const RUN_TIMEOUT_MS = 300000;

// Each mutant: one exact piece of text replaced in one file (`all`: every
// occurrence; otherwise it must occur exactly once).
const MUTANTS = [
  // src/head.cc: the head Node's _storeHeader() renders.
  {
    name: 'no-connection-keep-alive',
    what: 'drop the `Connection: keep-alive` line',
    file: 'src/head.cc',
    from: '      head->AppendRaw("Connection: keep-alive\\r\\n");\n',
    to: '',
  },
  {
    name: 'no-connection-close',
    what: 'drop `Connection: close` (no keep-alive)',
    file: 'src/head.cc',
    from: '      result.last = true;\n      head->AppendRaw("Connection: close\\r\\n");\n',
    to: '      result.last = true;\n',
  },
  {
    name: 'no-connection-close-at-max',
    what: 'drop `Connection: close` on the last request maxRequestsPerSocket allows',
    file: 'src/head.cc',
    from: 'state.max_requests_on_connection_reached) {\n      head->AppendRaw("Connection: close\\r\\n");\n',
    to: 'state.max_requests_on_connection_reached) {\n',
  },
  {
    name: 'no-last-on-close',
    what: '`Connection: close` without `_last` (the server keeps the connection)',
    file: 'src/head.cc',
    from: '      result.last = true;\n      head->AppendRaw("Connection: close\\r\\n");\n',
    to: '      head->AppendRaw("Connection: close\\r\\n");\n',
  },
  {
    name: 'no-keep-alive-timeout',
    what: 'drop the `Keep-Alive: timeout=` line',
    file: 'src/head.cc',
    from: 'if (state.keep_alive_timeout_set && !(fields & kFieldKeepAlive)) {',
    to: 'if (false) {',
  },
  {
    name: 'keep-alive-timeout-plus-one',
    what: 'alter the `Keep-Alive: timeout=` value (+1)',
    file: 'src/head.cc',
    from: 'head->AppendDecimal(\n              static_cast<uint64_t>(state.keep_alive_timeout_s));',
    to: 'head->AppendDecimal(\n              static_cast<uint64_t>(state.keep_alive_timeout_s) + 1);',
  },
  {
    name: 'content-length-plus-one',
    what: 'off-by-one in the Content-Length value',
    file: 'src/head.cc',
    from: 'head->AppendDecimal(static_cast<uint64_t>(state.content_length));',
    to: 'head->AppendDecimal(static_cast<uint64_t>(state.content_length) + 1);',
  },
  // src/addon.cc
  {
    name: 'native-body-for-head',
    what: 'send the body for HEAD / 204 / 304 (writeResponse)',
    file: 'src/addon.cc',
    from: '  if (state.has_body) {\n    if (!LoadBody(',
    to: '  if (true) {\n    if (!LoadBody(',
  },
  // lib/: conditions, bookkeeping.
  {
    name: 'js-body-for-head',
    what: 'send the body for HEAD / 204 / 304 (a head rendered by writeHead())',
    file: 'lib/end.js',
    from: 'const bodyFlags = !res._hasBody ? w.BODY_NONE :',
    to: 'const bodyFlags = false ? w.BODY_NONE :',
  },
  {
    name: 'js-has-body-bit',
    what: 'tell the addon every response has a body',
    file: 'lib/write.js',
    from: 'if (res._hasBody) bits |= HAS_BODY;',
    to: 'bits |= HAS_BODY;',
  },
  {
    name: 'js-keep-alive-round',
    what: '`Keep-Alive: timeout=` rounded instead of floored',
    file: 'lib/write.js',
    from: 'Math.floor(t / 1000)',
    to: 'Math.round(t / 1000)',
  },
  {
    name: 'js-no-keep-alive-timeout',
    what: 'never ask for the `Keep-Alive: timeout=` line',
    file: 'lib/write.js',
    from: 'if (res._keepAliveTimeout && res._defaultKeepAlive) bits |= KEEP_ALIVE_TIMEOUT_SET;',
    to: '',
  },
  {
    name: 'js-no-max',
    what: 'drop `max=` (maxRequestsPerSocket) from Keep-Alive',
    file: 'lib/write.js',
    from: 'return Number.isSafeInteger(m) ? m : NaN;',
    to: 'return 0;',
  },
  {
    name: 'js-content-length-state',
    what: 'off-by-one in `_contentLength` (state only, bytes unchanged)',
    file: 'lib/end.js',
    from: 'res._contentLength = results[2];',
    to: 'res._contentLength = results[2] + 1;',
  },
  {
    name: 'js-header-state',
    what: '`_header` not the rendered head (state only)',
    file: 'lib/write.js',
    from: 'res._header = header;',
    to: 'res._header = header.toLowerCase();',
  },
  {
    name: 'js-finish-before-prefinish',
    what: "emit 'finish' before 'prefinish'",
    file: 'lib/write.js',
    from: 'if (!res.chunkedEncoding) return nodeEnd.call(res, null, null, callback);',
    to: "res.emit('finish');\n  if (!res.chunkedEncoding) return nodeEnd.call(res, null, null, callback);",
  },
  {
    name: 'js-skip-callback',
    what: "skip the end() callback in the bookkeeping call",
    file: 'lib/write.js',
    from: 'nodeEnd.call(res, null, null, callback)',
    to: 'nodeEnd.call(res, null, null)',
    all: true,
  },
  {
    name: 'js-skip-bookkeeping',
    what: "skip Node's end() bookkeeping (no 'prefinish' / 'finish')",
    file: 'lib/write.js',
    from: 'if (!res.chunkedEncoding) return nodeEnd.call(res, null, null, callback);',
    to: 'if (!res.chunkedEncoding) {\n    res.finished = true;\n    return res;\n  }',
  },
];

function copyInto(dir) {
  for (const entry of COPY) {
    fs.cpSync(path.join(root, entry), path.join(dir, entry), { recursive: true });
  }
}

function sh(cmd, cmdArgs, cwd, extraEnv = {}) {
  const env = { ...process.env, ...extraEnv };
  delete env.FAST_RESPONSE_ADDON;
  delete env.NODE_TEST_CONTEXT;
  return spawnSync(cmd, cmdArgs, {
    cwd, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, timeout: RUN_TIMEOUT_MS,
  });
}

function build(dir) {
  const r = sh('npm', ['run', 'rebuild'], dir);
  if (r.status !== 0) {
    process.stderr.write(r.stdout.slice(-4000) + r.stderr.slice(-4000));
    return false;
  }
  return true;
}

/** 'passed', 'FAILED' (a test failed) or 'timeout'. */
function runSuite(dir, suite) {
  const r = sh(process.execPath, ['--test', '--test-reporter=tap', SUITES[suite]], dir, {
    FAST_RESPONSE_TEST_BAIL: '1',
    FAST_RESPONSE_TEST_TIMEOUT_MS: '15000',
  });
  if (r.error && r.error.code === 'ETIMEDOUT') return { result: 'timeout', detail: '' };
  const fail = /^# fail (\d+)/m.exec(r.stdout);
  const pass = /^# pass (\d+)/m.exec(r.stdout);
  const passed = r.status === 0 && fail !== null && Number(fail[1]) === 0 && pass !== null && Number(pass[1]) > 0;
  const firstFailure = (r.stdout.match(/^not ok \d+ - .*$/m) ||
                        r.stdout.match(/^\s+not ok \d+ - .*$/m) || [''])[0].trim();
  return {
    result: passed ? 'passed' : 'FAILED',
    detail: passed ? '' : firstFailure,
    output: r.stdout + r.stderr,
  };
}

/** The first failure's message in a TAP output, shortened. */
function firstError(output) {
  const lines = (output || '').split('\n');
  const at = lines.findIndex((l) => /^\s*error: /.test(l) && !/not run after/.test(l));
  return at === -1 ? '' : lines.slice(at, at + 12).join('\n').slice(0, 3000);
}

function applyMutant(dir, m) {
  const file = path.join(dir, m.file);
  const text = fs.readFileSync(file, 'utf8');
  const count = text.split(m.from).length - 1;
  if (count === 0 || (!m.all && count !== 1)) return false;
  fs.writeFileSync(file, m.all ? text.split(m.from).join(m.to) : text.replace(m.from, () => m.to));
  return true;
}

function restore(dir, m) {
  fs.copyFileSync(path.join(dir, '.pristine', m.file), path.join(dir, m.file));
}

function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-response-mutation-'));
  const started = Date.now();
  try {
    copyInto(dir);
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    fs.mkdirSync(path.join(dir, '.pristine'));
    for (const entry of ['lib', 'src']) {
      fs.cpSync(path.join(dir, entry), path.join(dir, '.pristine', entry), { recursive: true });
    }
    console.log(`copy: ${dir}`);
    if (!build(dir)) {
      console.error('the unmutated copy does not build');
      return 2;
    }
    const addon = path.join(dir, 'build', 'Release', 'fast_response.node');
    const pristineAddon = path.join(dir, '.pristine', 'fast_response.node');
    fs.copyFileSync(addon, pristineAddon);

    for (const suite of Object.keys(SUITES)) {
      const r = runSuite(dir, suite);
      console.log(`baseline ${suite}: ${r.result} ${r.detail}`);
      if (r.result !== 'passed') {
        console.error((r.output || '').split('\n').filter((l) => !/^\s+(at |async )/.test(l))
          .slice(-80).join('\n'));
        console.error('the unmutated copy fails: fix that first');
        return 2;
      }
    }

    const rows = [];
    for (const m of MUTANTS) {
      if (only !== null && !only.has(m.name)) continue;
      const t0 = Date.now();
      const native = m.file.startsWith('src/');
      const row = { name: m.name, what: m.what, matrix: '-', edges: '-', killed: 'no', note: '' };
      rows.push(row);
      if (!applyMutant(dir, m)) {
        row.killed = 'NOT APPLIED';
        row.note = `text not found once in ${m.file}`;
        console.log(`${m.name}: NOT APPLIED`);
        continue;
      }
      try {
        if (native && !build(dir)) {
          row.killed = 'BUILD FAILED';
          continue;
        }
        const notes = [];
        for (const suite of Object.keys(SUITES)) {
          const r = runSuite(dir, suite);
          row[suite] = r.result === 'passed' ? 'survived' : (r.result === 'timeout' ? 'killed (timeout)' : 'killed');
          if (r.detail) notes.push(`${suite}: ${r.detail}`);
          if (verbose && r.result !== 'passed') console.log(`${suite}:\n${firstError(r.output)}`);
        }
        row.killed = row.matrix !== 'survived' || row.edges !== 'survived' ? 'yes' : 'NO';
        row.note = notes.join('; ');
      } finally {
        restore(dir, m);
        if (native) fs.copyFileSync(pristineAddon, addon);
      }
      console.log(`${m.name}: killed ${row.killed} (matrix ${row.matrix}, edges ${row.edges}) ` +
        `${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }

    console.log('\n| mutant | edit | matrix | edges | killed |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) {
      console.log(`| ${r.name} | ${r.what} | ${r.matrix} | ${r.edges} | ${r.killed} |`);
    }
    const bad = rows.filter((r) => r.killed !== 'yes');
    console.log(`\n${rows.length - bad.length} of ${rows.length} mutants killed ` +
      `(${((Date.now() - started) / 1000).toFixed(0)} s)`);
    for (const r of bad) console.log(`  ${r.name}: ${r.killed} ${r.note}`);
    return bad.length === 0 ? 0 : 1;
  } finally {
    if (keep) console.log(`kept ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = main();
