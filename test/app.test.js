'use strict';

// benchmark/app.js end to end: a tiny server (test/fixtures/app-server.js)
// measured plain and under -r fast-response/register, 1 run of 1 s each.
// Only that the command works and prints its table with a ratio: no timing
// is asserted (BENCHMARKING.md). Needs wrk; skipped without it.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { test } = require('node:test');
const benchmarkers = require('../benchmark/_http-benchmarkers');

const root = path.join(__dirname, '..');

function run(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'benchmark', 'app.js'), ...args],
                        { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

test('benchmark/app.js measures a server file plain and under register, and prints the ratio',
     { skip: !benchmarkers.available('wrk') && 'wrk is not installed (apt-get install wrk)' }, async () => {
       const server = path.join('test', 'fixtures', 'app-server.js');
       const r = await run(['--runs', '1', '--duration', '1', '--warmup', '0', '-c', '4', server]);
       assert.equal(r.code, 0, `exit ${r.code || r.signal}\n${r.stderr}`);
       // One line of the table: the app, its configuration, patched/plain,
       // and a median ratio with min-max.
       assert.match(r.stdout, new RegExp(`^node ${server.replace(/[./]/g, '\\$&')} path=/ c=4 patched/plain .* ` +
                                         '\\d+\\.\\d{3} \\(\\d+\\.\\d{3}-\\d+\\.\\d{3}\\)', 'm'));
       assert.match(r.stderr, /run 1\/1\] plain: [\d,]+ res\/s, [\d.]+ µs cpu\/res/);
       assert.match(r.stderr, /run 1\/1\] patched: [\d,]+ res\/s, [\d.]+ µs cpu\/res, .*fast path \d+\/\d+/);
       assert.match(r.stderr, /fastResponse\.stats\(\) under register, measured runs: \d+ fast/);
       // The same app sends the same response either way.
       assert.doesNotMatch(r.stderr, /responses differ/);
     });

test('benchmark/app.js fails clearly on a path that does not answer 2xx',
     { skip: !benchmarkers.available('wrk') && 'wrk is not installed (apt-get install wrk)' }, async () => {
       const r = await run(['--runs', '1', '--duration', '1', '--path', '/missing',
                            path.join('test', 'fixtures', 'app-server.js')]);
       assert.equal(r.code, 1);
       assert.match(r.stderr, /GET \/missing answered 404 on the plain server/);
     });
