'use strict';

// Instructions per streamed response under valgrind --tool=callgrind, with
// a fixed number of responses on one keep-alive connection, each request
// sent when the previous response has ended: no load generator, no
// timing, so the figure moves less between runs than
// benchmark/instructions.js's (seconds of wrk load, where the responses
// served and the garbage collections they cause vary).
//
//   node benchmark/instructions-stream.js [--len 64] [--writes 8]
//        [--tick one|each] [--requests 5000,25000] [method ...]
//
// method: write (Node's own res.write() and end(), no package), fastWrite
// (res.fastWrite() and res.fastEnd() after install()), patched (res.write() under
// install({ patchEnd: true })), bound (http/stream.js's bound: the head
// and chunks framed in advance, one socket.write() per tick, Node's end();
// nothing rendered, framed or validated). Default: write and fastWrite. Each
// response: writeHead(200, { Content-Type }), `writes` string chunks of
// `len` bytes (in one tick, or one per tick with setImmediate between),
// end(). Per response: (instructions(b) - instructions(a)) / (b - a) of
// two runs of a and b requests, which cancels start-up and the JIT's
// warm-up. The client runs in the same process (its parse of the
// response is in every count, the same for each method).

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { streamedHandler, streamedBound } = require('./_cases.js');

const METHODS = ['write', 'fastWrite', 'patched', 'bound'];

/** The server and its client: `requests` responses, then exit. */
function child({ method, len, writes, tick, requests }) {
  const http = require('node:http');
  const net = require('node:net');
  const fastResponse = require('..');
  if (method === 'fastWrite') fastResponse.install();
  else if (method === 'patched') fastResponse.install({ patchEnd: true });
  const fast = method === 'fastWrite';
  const chunk = 'x'.repeat(len);
  const server = http.createServer(method === 'bound' ? streamedBound(chunk, writes, tick) : streamedHandler({
    chunk, writes, tick, headers: { 'Content-Type': 'text/plain' },
    write: fast ? 'fastWrite' : 'write', end: fast ? 'fastEnd' : 'end',
  }));
  server.listen(0, '127.0.0.1', () => {
    const client = net.connect(server.address().port, '127.0.0.1');
    const request = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';
    let left = requests;
    let received = '';
    client.on('data', (data) => {
      received += data.toString('latin1');
      let end;
      while ((end = received.indexOf('\r\n0\r\n\r\n')) !== -1) {
        received = received.slice(end + 7);
        if (--left === 0) {
          client.end();
          server.close();
          return;
        }
        client.write(request);
      }
    });
    client.write(request);
  });
}

/** Instructions callgrind counted for one child run. */
function count(config) {
  const args = ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, __filename, '--child',
                JSON.stringify(config)];
  const out = spawnSync('valgrind', args, { encoding: 'utf8', maxBuffer: 1 << 24 });
  const match = /Collected\s*:\s*(\d+)/.exec(out.stderr || '');
  if (out.status !== 0 || match === null) {
    throw new Error(`valgrind ${args.join(' ')}: status ${out.status}\n${out.stderr}`);
  }
  return Number(match[1]);
}

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      len: { type: 'string', default: '64' },
      writes: { type: 'string', default: '8' },
      tick: { type: 'string', default: 'one' },
      requests: { type: 'string', default: '5000,25000' },
      child: { type: 'string' },
    },
  });
  if (values.child !== undefined) {
    child(JSON.parse(values.child));
    return;
  }
  const [a, b] = values.requests.split(',').map(Number);
  const methods = positionals.length > 0 ? positionals : ['write', 'fastWrite'];
  for (const method of methods) {
    if (!METHODS.includes(method)) throw new Error(`unknown method ${method}: one of ${METHODS.join(', ')}`);
  }
  if (!['one', 'each'].includes(values.tick)) throw new Error('--tick: one or each');
  if (!(a > 0 && b > a)) throw new Error('--requests a,b with 0 < a < b');
  const config = { len: Number(values.len), writes: Number(values.writes), tick: values.tick };
  console.log(`node ${process.version}, ${config.writes} writes of ${config.len} B, tick=${config.tick}, ` +
              `${a} and ${b} responses on one connection, under callgrind (${path.basename(__filename)})`);
  console.log('method      instructions/response');
  for (const method of methods) {
    const perResponse = (count({ ...config, method, requests: b }) - count({ ...config, method, requests: a })) / (b - a);
    console.log(`${method.padEnd(12)}${Math.round(perResponse).toLocaleString('en-US')}`);
  }
}

main();
