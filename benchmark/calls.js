'use strict';

// The package's own cost per call, without the network: the addon's write
// calls (as lib/gate.js makes them) with /dev/null as the socket, so that the kernel's
// part is the same small writev(2) every time.
//
//   node benchmark/calls.js [case ...]             ns per call (timing)
//   node benchmark/calls.js --callgrind [case ...] user-space instructions
//                                                  per call (valgrind)
//   --calls <n>  calls per measurement (default 200000; 20000 under valgrind)
//
// Timings on a shared VM drift by tens of percent from run to run;
// instruction counts do not (valgrind --tool=callgrind counts the user-space
// instructions of a run with n calls and of one with 2n, and the difference
// divided by n cancels start-up and JIT warm-up; what is left varies by a few
// percent with garbage collection). The kernel's part of writev(2) is not in
// the counts.
//
// Cases:
//   send-2, send-8     joinHeaders() + writeResponse() with validation, as
//                      send() does for 2 and 8 header fields
//   setheader-1        writeResponse() without validation, as fastEnd() after
//                      one setHeader()
//   template           writeTemplate() of a compiled template, 2 fields
//   rendered-string    writeRendered(): a head Node rendered + a string body
//   rendered-buffer    the same with a Buffer body
//   writesync          fs.writeSync() of the body: the syscall from
//                      JavaScript, for scale

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const LEN = 64;
const BODY = 'a'.repeat(LEN);
const BODY_BUFFER = Buffer.from(BODY);
const HEADERS_2 = { 'Content-Type': 'text/plain', 'Content-Length': LEN };
const HEADERS_8 = {
  ...HEADERS_2,
  'Cache-Control': 'no-cache',
  'X-Request-Id': '0f8fad5b-d9cb-469f-a165-70867728950e',
  Vary: 'Accept-Encoding',
  'X-Content-Type-Options': 'nosniff',
  ETag: '"5d8c72a5edda8d6a"',
  Server: 'fast-response',
};
const CASES = ['send-2', 'send-8', 'setheader-1', 'template', 'rendered-string', 'rendered-buffer',
               'writesync'];

/** The call each case measures, bound to /dev/null. */
function makeCall(name) {
  const { binding, results, args } = require('../lib/binding');
  // Read once: `layout` checks each name it is asked for.
  const L = { ...binding.layout };
  const { SEP, joinHeaders } = require('../lib/headers');
  const { stateBits } = require('../lib/gate');
  if (binding === null) throw new Error('the addon did not load: npm run rebuild');
  const fd = fs.openSync('/dev/null', 'w');
  // A response without a socket: its state is what a keep-alive HTTP/1.1
  // request's response has (the server's default keepAliveTimeout).
  const res = new http.ServerResponse({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} });
  res.shouldKeepAlive = true;
  res._keepAliveTimeout = 5000;
  const utf8 = L.BODY_UTF8 | L.HEAD_UTF8;
  // The numeric arguments of a rendering write, as lib/gate.js sets them.
  const setArgs = (bits, bodyFlags, units) => {
    args[L.ARG_FD] = fd;
    args[L.ARG_STATE_BITS] = bits;
    args[L.ARG_KEEP_ALIVE_SECONDS] = 5;
    args[L.ARG_MAX_REQUESTS] = 0;
    args[L.ARG_BODY_FLAGS] = bodyFlags;
    args[L.ARG_BODY_UNITS] = units;
  };
  const bits = stateBits(res);
  const head = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 64\r\n' +
               'Date: Tue, 01 Dec 2026 05:00:00 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n';
  const writeResponse = (text, count, extraBits) => {
    setArgs(bits | extraBits, utf8, LEN);
    args[L.ARG_STATUS_CODE] = 200;
    args[L.ARG_FIELD_COUNT] = count;
    return binding.writeResponse(text, BODY);
  };
  const send = (headers) => () => {
    const fields = joinHeaders(headers);
    return writeResponse('OK' + SEP + fields.joined, fields.count, L.VALIDATE | L.CONTENT_LENGTH_AS_FIELD);
  };
  const rendered = (body, bodyFlags) => () => {
    args[L.ARG_FD] = fd;
    args[L.ARG_BODY_FLAGS] = bodyFlags;
    args[L.ARG_BODY_UNITS] = typeof body === 'string' ? body.length : 0;
    args[L.ARG_HEAD_UNITS] = head.length;
    return binding.writeRendered(head, body);
  };
  switch (name) {
    case 'send-2': return send(HEADERS_2);
    case 'send-8': return send(HEADERS_8);
    case 'setheader-1': {
      const text = 'OK' + SEP + 'Content-Type' + SEP + 'text/plain' + SEP;
      return () => writeResponse(text, 1, 0);
    }
    case 'template': {
      const fields = joinHeaders(HEADERS_2);
      const prepared = binding.compileTemplate(200, 'OK' + SEP + fields.joined, fields.count);
      if (results[L.RESULT_REASON] !== 0) throw new Error('the template steps aside');
      return () => {
        setArgs(bits | L.CONTENT_LENGTH_AS_FIELD, utf8, LEN);
        return binding.writeTemplate(prepared, BODY);
      };
    }
    case 'rendered-string': return rendered(BODY, utf8);
    case 'rendered-buffer': return rendered(BODY_BUFFER, L.BODY_BYTES);
    case 'writesync': return () => fs.writeSync(fd, BODY_BUFFER);
    default: throw new Error(`unknown case ${name} (${CASES.join(', ')})`);
  }
}

// Child mode: `calls.js --run <case> <n>` makes n calls and exits.
function runCalls(name, n) {
  const call = makeCall(name);
  for (let i = 0; i < n; i++) call();
}

function timeCase(name, n) {
  const call = makeCall(name);
  for (let i = 0; i < n / 4; i++) call();  // warm-up: optimized code
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) call();
  return Number(process.hrtime.bigint() - start) / n;
}

function instructions(name, n) {
  const run = (calls) => {
    const r = spawnSync('valgrind', ['--tool=callgrind', '--callgrind-out-file=/dev/null',
                                     process.execPath, '--single-threaded', __filename, '--run', name, String(calls)],
                        { encoding: 'utf8' });
    if (r.error) throw new Error(`valgrind: ${r.error.message} (apt-get install valgrind)`);
    const m = /Collected : (\d+)/.exec(r.stderr);
    if (r.status !== 0 || m === null) throw new Error(`valgrind failed:\n${r.stderr.slice(-2000)}`);
    return Number(m[1]);
  };
  return (run(2 * n) - run(n)) / n;
}

function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--run') {
    runCalls(args[1], Number(args[2]));
    return;
  }
  const callgrind = args.includes('--callgrind');
  const at = args.indexOf('--calls');
  const n = at === -1 ? (callgrind ? 20000 : 200000) : Number(args[at + 1]);
  const names = args.filter((a, i) => !a.startsWith('--') && (at === -1 || i !== at + 1));
  const list = names.length === 0 ? CASES : names;
  console.log(`node ${process.version}, ${path.relative(process.cwd(), path.join(__dirname, '..')) || '.'}, ` +
              `${n} calls per measurement, body ${LEN} bytes, socket /dev/null`);
  for (const name of list) {
    if (callgrind) {
      console.log(`${name.padEnd(16)} ${Math.round(instructions(name, n)).toString().padStart(7)} instructions/call`);
    } else {
      console.log(`${name.padEnd(16)} ${timeCase(name, n).toFixed(0).padStart(7)} ns/call`);
    }
  }
}

main();
