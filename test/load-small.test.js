'use strict';

// A small run of scripts/load.js (`npm run test:load` runs the full one):
// 100 keep-alive connections, 10 of them pipelining 16 deep, 5,000 requests
// through fastEnd(), send(), template(), json() and Node's own write() +
// end(), every response checked byte for byte by a client in a child
// process; descriptors back to their count, no socket error, bounded RSS.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { test } = require('node:test');

const script = path.join(__dirname, '..', 'scripts', 'load.js');
const TIMEOUT_S = 50;

function runLoad(args) {
  return new Promise((resolve, reject) => {
    // The V8 flags and malloc setting the script would re-run itself with
    // (scripts/load.js, prepareProcess()); in a process group of its own,
    // so that a timeout kills the client process too.
    const child = spawn(process.execPath, [
      '--min-semi-space-size=16', '--max-semi-space-size=16',
      script, ...args, '--timeout', String(TIMEOUT_S - 5), '--json',
    ], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, MALLOC_MMAP_THRESHOLD_: '131072' },
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s) => (stderr += s));
    const timer = setTimeout(() => {
      process.kill(-child.pid, 'SIGKILL');
      reject(new Error(`scripts/load.js did not finish in ${TIMEOUT_S} s\n${stdout}\n${stderr}`));
    }, TIMEOUT_S * 1000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('100 connections, 5,000 requests: every response byte-exact, no descriptor leak, bounded RSS', async (t) => {
  const { code, stdout, stderr } = await runLoad(['--connections', '100', '--requests', '5000']);
  const lines = stdout.trim().split('\n');
  for (const line of lines.slice(0, -1)) t.diagnostic(line);
  let figures;
  assert.doesNotThrow(() => {
    figures = JSON.parse(lines.at(-1));
  }, `the figures as JSON on the last line\n${stdout}\n${stderr}`);

  const failed = figures.checks.filter((c) => !c.ok).map((c) => c.what);
  assert.deepEqual(failed, [], 'every check of the load script passes');
  assert.equal(code, 0, stderr);

  const c = figures.client;
  assert.equal(c.responses, 5000);
  assert.deepEqual(c.errors, []);
  assert.equal(c.peakConnections, 100);
  assert.ok(c.reconnects > 0, 'some connections were closed and replaced');
  assert.equal(figures.handled, 5000);
  assert.deepEqual([...figures.socketErrors, ...figures.clientErrors, ...figures.handlerErrors], []);
  assert.equal(figures.fdAfter, figures.fdBefore);
  assert.equal(figures.openSocketsAfter, 0);
  assert.ok(figures.rssEnd - figures.rssWarm < 20 * 1024 * 1024);
  // Both paths were taken: fast writes, and fallbacks for pipelined
  // responses not yet current and for heads already sent by write().
  assert.ok(figures.stats.fast > 0);
  assert.ok(figures.stats.reasons['not-current'] > 0);
  assert.ok(figures.stats.reasons['head-sent'] > 0);
});
