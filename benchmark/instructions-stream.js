'use strict';

// Instructions per response under valgrind --tool=callgrind, with a fixed
// number of responses on one keep-alive connection, each request sent when
// the previous response has ended: no load generator, no timing, so the
// figure moves less between runs than benchmark/instructions.js's (seconds
// of wrk load, where the responses served and the garbage collections they
// cause vary). Streamed responses, a lone end(chunk) (--writes 0), or
// (--app) a framework's app.
//
//   node benchmark/instructions-stream.js [--len 64] [--writes 8]
//        [--tick one|each] [--text ascii|utf8|buffer] [--end none|data]
//        [--requests 5000,25000]
//        [--burst 1] [--repeat 1] [--jobs 1] [method ...]
//   node benchmark/instructions-stream.js --app express|fastify|koa
//        [--route json|text] [--len 64] [--requests ...] [--repeat 1]
//        [--jobs 1] [plain] [patched]
//
// method: write (Node's own res.write() and end(), no package), fastWrite
// (res.fastWrite() and res.fastEnd() after install()), patched (res.write() under
// install({ patchEnd: true })), bound (http/stream.js's bound: the head
// and chunks framed in advance, one socket.write() per tick, Node's end();
// nothing rendered, framed or validated). Default: write and fastWrite. Each
// response: writeHead(200, { Content-Type }), `writes` string chunks of
// `len` bytes (in one tick, or one per tick with setImmediate between),
// end() (with --end data, the last chunk as end()'s data); ASCII text, or with --text utf8 UTF-8 beyond ASCII ("naïve "
// repeated: 6 characters, 7 bytes, so a chunk has fewer characters than
// bytes), or with --text buffer the ASCII text as a Buffer. With --writes 0: http/patched.js's handler, `res.end(chunk)`
// alone (Node's implicit head with its Content-Length; `res.fastEnd(chunk)`
// for fastWrite; no bound), the counterpart of the `patched` and
// `end-string` rates. --burst n (with --writes 0): a connection per n
// requests, sent pipelined in one write, then closed by the client once the
// n responses arrived (a client that pipelines once), where the default is
// one request at a time on one connection. With --app: the app of http/<app>.js (_apps.js) and its `route`
// at `len` bytes, method plain (without the package) or patched (under
// install({ patchEnd: true }), as `-r fast-response/register`); default
// both. Per response: (instructions(b) - instructions(a)) / (b - a) of
// two runs of a and b requests, which cancels start-up and the JIT's
// warm-up. The client runs in the same process (its parse of the
// response is in every count, the same for each method).
//
// The figure still moves between runs of one method (measured on Node 26,
// 8 writes of 1 KiB in one tick: 148,370 to 158,600 for Node's path in
// five runs; the garbage collector's and the JIT's work per response is
// not the same each time). --repeat n measures each method n times,
// interleaved (all methods in turn, n rounds), and prints the median, the
// lowest and highest, and each method's median against the first
// method's; --jobs runs that many valgrinds at once (the counts do not
// depend on it).

const { spawn } = require('node:child_process');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { streamedHandler, streamedBound, appRoute } = require('./_cases.js');
const apps = require('./_apps.js');
const { median } = require('./_stats.js');

const METHODS = ['write', 'fastWrite', 'patched', 'bound'];
const APP_METHODS = ['plain', 'patched'];

/** The server and its client: `requests` responses, then exit. */
function child({ method, len, writes, tick, text = 'ascii', end = 'none', requests, app, route, burst = 1 }) {
  const http = require('node:http');
  const fastResponse = require('..');
  if (method === 'fastWrite') fastResponse.install();
  else if (method === 'patched') fastResponse.install({ patchEnd: true });
  if (app !== undefined) {
    // The framework loaded after install(), as -r fast-response/register has it.
    const { value, body } = appRoute(route, len);
    Promise.resolve(apps[app].start(require(app), value, route)).then(({ port, close }) => {
      // A response ends with its body (Content-Length): no head holds it.
      drive(port, requests, body, close);
    }).catch((err) => {
      console.error(err);
      process.exitCode = 1;
    });
    return;
  }
  const fast = method === 'fastWrite';
  const chunk = textOf(text, len);
  if (writes === 0) {
    // --writes 0: http/patched.js's handler, end(chunk) alone (Node's
    // implicit head, its Content-Length); the client reads up to the body.
    // (main() refuses method bound with it.)
    const server = http.createServer((req, res) => {
      if (fast) res.fastEnd(chunk);
      else res.end(chunk);
    });
    server.listen(0, '127.0.0.1', () => {
      const port = server.address().port;
      if (burst > 1) driveBursts(port, requests, burst, `\r\n\r\n${chunk}`, () => server.close());
      else drive(port, requests, `\r\n\r\n${chunk}`, () => server.close());
    });
    return;
  }
  // (The bound frames the same bytes from a string.)
  const server = http.createServer(method === 'bound' ? streamedBound(chunk.toString('latin1'), writes, tick) : streamedHandler({
    chunk, writes, tick, headers: { 'Content-Type': 'text/plain' },
    write: fast ? 'fastWrite' : 'write', end: fast ? 'fastEnd' : 'end', endData: end === 'data',
  }));
  server.listen(0, '127.0.0.1', () => drive(server.address().port, requests, '\r\n0\r\n\r\n', () => server.close()));
}

/**
 * A chunk of `len` bytes in UTF-8: 'x' repeated (ASCII; for `text`
 * 'buffer' as a Buffer), or for `text` 'utf8' "naïve " repeated (7 bytes)
 * and 'x' for the bytes left.
 */
function textOf(text, len) {
  if (text === 'ascii') return 'x'.repeat(len);
  if (text === 'buffer') return Buffer.from('x'.repeat(len), 'latin1');
  return 'na\u00efve '.repeat(Math.floor(len / 7)) + 'x'.repeat(len % 7);
}

const REQUEST = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';

/**
 * Calls `onResponse()` on `client` for each response that arrives, a
 * response ending with `last` (its UTF-8 bytes; the bytes read are decoded
 * as latin1), until it returns false.
 */
function eachResponse(client, last, onResponse) {
  const tail = Buffer.from(last, 'utf8').toString('latin1');
  let received = '';
  client.on('data', (data) => {
    received += data.toString('latin1');
    let end;
    while ((end = received.indexOf(tail)) !== -1) {
      received = received.slice(end + tail.length);
      if (!onResponse()) return;
    }
  });
}

/**
 * The client: `requests` GETs on one connection to `port`, each sent when
 * the previous response's last bytes, `last`, arrived; then `close()`.
 */
function drive(port, requests, last, close) {
  const client = require('node:net').connect(port, '127.0.0.1');
  let left = requests;
  eachResponse(client, last, () => {
    if (--left === 0) {
      client.end();
      close();
      return false;
    }
    client.write(REQUEST);
    return true;
  });
  client.write(REQUEST);
}

/**
 * The client of --burst: `requests` GETs (a multiple of `burst`), `burst`
 * of them in one write on a new connection, which it closes once their
 * responses (each ending with `last`) arrived; then the next connection,
 * and `close()` after the last.
 */
function driveBursts(port, requests, burst, last, close) {
  const request = REQUEST.repeat(burst);
  let left = requests;
  const next = () => {
    const client = require('node:net').connect(port, '127.0.0.1');
    let pending = burst;
    eachResponse(client, last, () => {
      if (--pending !== 0) return true;
      client.end();
      left -= burst;
      if (left > 0) next();
      else close();
      return false;
    });
    client.write(request);
  };
  next();
}

/** Instructions callgrind counted for one child run (a promise). */
function count(config) {
  const args = ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, __filename, '--child',
                JSON.stringify(config)];
  return new Promise((resolve, reject) => {
    const child = spawn('valgrind', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (data) => {
      stderr += data;
    });
    child.on('error', reject);
    child.on('close', (status) => {
      const match = /Collected\s*:\s*(\d+)/.exec(stderr);
      if (status !== 0 || match === null) {
        reject(new Error(`valgrind ${args.join(' ')}: status ${status}\n${stderr}`));
      } else {
        resolve(Number(match[1]));
      }
    });
  });
}

/** Runs `tasks` (functions returning promises), `jobs` at a time, in order; their results. */
async function pool(tasks, jobs) {
  const results = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, worker));
  return results;
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      len: { type: 'string', default: '64' },
      writes: { type: 'string', default: '8' },
      burst: { type: 'string', default: '1' },
      tick: { type: 'string', default: 'one' },
      text: { type: 'string', default: 'ascii' },
      end: { type: 'string', default: 'none' },
      requests: { type: 'string', default: '5000,25000' },
      repeat: { type: 'string', default: '1' },
      jobs: { type: 'string', default: '1' },
      app: { type: 'string' },
      route: { type: 'string', default: 'json' },
      child: { type: 'string' },
    },
  });
  if (values.child !== undefined) {
    child(JSON.parse(values.child));
    return;
  }
  const [a, b] = values.requests.split(',').map(Number);
  const app = values.app;
  if (app !== undefined && !Object.hasOwn(apps, app)) {
    throw new Error(`--app ${app}: one of ${Object.keys(apps).join(', ')}`);
  }
  const known = app === undefined ? METHODS : APP_METHODS;
  const methods = positionals.length > 0 ? positionals : known.slice(0, 2);
  for (const method of methods) {
    if (!known.includes(method)) throw new Error(`unknown method ${method}: one of ${known.join(', ')}`);
  }
  if (!['one', 'each'].includes(values.tick)) throw new Error('--tick: one or each');
  if (!['ascii', 'utf8', 'buffer'].includes(values.text)) throw new Error('--text: ascii, utf8 or buffer');
  if (!['none', 'data'].includes(values.end)) throw new Error('--end: none or data');
  const writes = Number(values.writes);
  if (!(Number.isInteger(writes) && writes >= 0)) throw new Error('--writes: a whole number, 0 or more');
  if (writes === 0 && methods.includes('bound')) {
    throw new Error('--writes 0 has no bound case: use benchmark/instructions.js bound=bound');
  }
  if (app !== undefined && appRoute(values.route, Number(values.len)) === null) {
    throw new Error(`--route ${values.route} needs a longer --len`);
  }
  if (!(a > 0 && b > a)) throw new Error('--requests a,b with 0 < a < b');
  const burst = Number(values.burst);
  if (!(Number.isInteger(burst) && burst >= 1)) throw new Error('--burst: a whole number, 1 or more');
  if (burst > 1 && (writes !== 0 || app !== undefined)) throw new Error('--burst needs --writes 0 (and no --app)');
  if (a % burst !== 0 || b % burst !== 0) throw new Error(`--requests a,b: multiples of --burst ${burst}`);
  const repeat = Number(values.repeat);
  const jobs = Number(values.jobs);
  if (!(Number.isInteger(repeat) && repeat >= 1)) throw new Error('--repeat: a whole number of runs, 1 or more');
  if (!(Number.isInteger(jobs) && jobs >= 1)) throw new Error('--jobs: a whole number, 1 or more');
  const config = app === undefined ?
    { len: Number(values.len), writes, tick: values.tick, text: values.text, end: values.end, burst } :
    { len: Number(values.len), app, route: values.route };
  console.log(`node ${process.version}, ` +
              (app === undefined ?
                (writes === 0 ? `end(chunk) of ${config.len} B, ` +
                  (burst > 1 ? `bursts of ${burst} pipelined requests, a connection each, ` : '') :
                  `${writes} writes of ${config.len} B, tick=${config.tick}, text=${config.text}, end=${config.end}, `) :
                `${app} route=${config.route} at ${config.len} B, `) +
              `${a} and ${b} responses${burst > 1 ? '' : ' on one connection'}, under callgrind (${path.basename(__filename)})` +
              (repeat > 1 ? `, ${repeat} rounds` : ''));
  // Round by round, each method in turn: its run of b, then of a requests.
  const tasks = [];
  for (let round = 0; round < repeat; round++) {
    for (const method of methods) {
      tasks.push(() => count({ ...config, method, requests: b }), () => count({ ...config, method, requests: a }));
    }
  }
  const counts = await pool(tasks, jobs);
  const perResponse = new Map(methods.map((method) => [method, []]));
  let i = 0;
  for (let round = 0; round < repeat; round++) {
    for (const method of methods) {
      perResponse.get(method).push((counts[i] - counts[i + 1]) / (b - a));
      i += 2;
    }
  }
  if (repeat === 1) {
    console.log('method      instructions/response');
    for (const method of methods) console.log(`${method.padEnd(12)}${fmt(perResponse.get(method)[0])}`);
    return;
  }
  const base = median(perResponse.get(methods[0]));
  console.log(`method      instructions/response: median (lowest-highest)  median/${methods[0]}'s`);
  for (const method of methods) {
    const runs = perResponse.get(method);
    const m = median(runs);
    console.log(`${method.padEnd(12)}${fmt(m).padStart(9)} (${fmt(Math.min(...runs))}-${fmt(Math.max(...runs))})`.padEnd(52) +
                (m / base).toFixed(3));
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
