'use strict';

// Does fast-response help my app? Measures a server file as it is (plain)
// and under `node -r fast-response/register` (patched), with the project's
// protocol (BENCHMARKING.md): server pinned to one CPU, wrk to another,
// runs interleaved (plain, patched, plain, patched, ...), each run a fresh
// server process, a warm-up discarded, then the median ratio patched/plain
// with min-max, Welch's t-test stars, and server CPU µs per response.
//
//   node benchmark/app.js [options] <server.js> [-- <arguments for the server>]
//
//   --path <p>              URL path to load (default /); it must answer 2xx
//   -c, --connections <n>   keep-alive connections (default 50)
//   -d, --duration <s>      seconds measured per run (default 5)
//   --runs <n>              runs of each side (default 5)
//   --warmup <s>            warm-up load before each run, discarded (default 1)
//   --node <node>           the Node binary for the server: a path, or a
//                           major installed by scripts/node-versions.js (26)
//   --port <n>              the port the server listens on, when it ignores
//                           $PORT (default: a free port, passed as $PORT)
//   --benchmarker <name>    wrk (default) or autocannon
//   --csv <file>            also write compare.js's CSV of the runs there
//                           (node benchmark/stats.js <file> prints the table again)
//
// The contract for the server file: it starts an HTTP/1.1 server that
// accepts connections on 127.0.0.1, on the port in the environment variable
// PORT (HOST is set to 127.0.0.1 too), and answers GET <path> with a 2xx
// response. A server that ignores PORT is found anyway: a preload
// (benchmark/_app-preload.js) reports the first TCP port the process listens
// on (or give --port). The server runs until app.js ends it with SIGTERM.
// One process serves: the CPU time per response is that process's
// (`process.cpuUsage()`, read over IPC by the preload); under cluster only
// the primary's would be counted, so µs/res is not shown for it.
//
// Checked before the runs count: a first GET <path> on each side answers
// 2xx, and plain and patched send the same status, header fields (Date
// aside) and body (a difference is reported: content that changes per
// request, or a bug to report); during each run the load generator sees no
// socket error and no status >= 400. Under register, fastResponse.stats()
// says how many responses the fast path wrote and why others fell back
// (Node's path: TLS, compression, ...), and how many res.write() chunks it
// framed: shown, not enforced, since it is the app's own mix.
//
// stdout: the table (as compare.js prints it); stderr: progress, the
// server's own output, the fast-path summary.

const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');
const { parseArgs } = require('node:util');
const benchmarkers = require('./_http-benchmarkers');
const { packagePath } = require('./_cases');
const common = require('./common');
const { resolveBinary } = require('./compare');
const stats = require('./_stats');

const PRELOAD = path.join(__dirname, '_app-preload.js');
const MESSAGE = 'fast-response-app:';
const START_TIMEOUT_MS = 30000;
const STOP_TIMEOUT_MS = 5000;
const IPC_TIMEOUT_MS = 5000;
// Above this share of fallbacks under register, the summary says so.
const MIN_FAST_SHARE = 0.99;

// The server processes running (killed on exit and Ctrl-C).
const servers = new Set();

function parseCommandLine(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      path: { type: 'string', default: '/' },
      connections: { type: 'string', short: 'c', default: '50' },
      duration: { type: 'string', short: 'd', default: '5' },
      runs: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      node: { type: 'string', default: process.execPath },
      port: { type: 'string' },
      benchmarker: { type: 'string', default: 'wrk' },
      csv: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const number = (name, { integer = false, min = 0 } = {}) => {
    const n = Number(values[name]);
    if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
      throw new Error(`--${name} ${values[name]}: ${integer ? 'an integer' : 'a number'} of at least ${min} is expected`);
    }
    return n;
  };
  if (!values.path.startsWith('/')) throw new Error(`--path ${values.path}: a path starting with / is expected`);
  return {
    help: values.help,
    server: positionals[0],
    serverArgs: positionals.slice(1),
    path: values.path,
    connections: number('connections', { integer: true, min: 1 }),
    duration: number('duration', { min: 1 }),
    runs: number('runs', { integer: true, min: 1 }),
    warmup: number('warmup'),
    node: values.node,
    port: values.port === undefined ? null : number('port', { integer: true, min: 1 }),
    benchmarker: values.benchmarker,
    csv: values.csv,
  };
}

function usage() {
  const text = fs.readFileSync(__filename, 'utf8').split('\n');
  const start = text.findIndex((l) => l.startsWith('// Does'));
  const end = text.findIndex((l, i) => i > start && !l.startsWith('//'));
  return text.slice(start, end).map((l) => l.replace(/^\/\/ ?/, '')).join('\n');
}

// ---------------------------------------------------------------------------
// The server process

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * One server process: `side` 'plain' or 'patched' (-r register.js of the
 * package under test). Resolves to { child, port, request(message) } once
 * it accepts connections; rejects when it exits or is not up in time.
 */
async function startServer(opts, binary, side) {
  const port = opts.port || await freePort();
  const execArgv = side === 'patched' ? ['-r', path.join(packagePath, 'register.js')] : [];
  const child = common.spawnChild({
    binary,
    execArgv: [...execArgv, '-r', PRELOAD],
    file: path.resolve(opts.server),
    args: opts.serverArgs,
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      FAST_RESPONSE_APP_PACKAGE: side === 'patched' ? packagePath : '',
    },
  });
  const server = { child, port: null, exited: null };
  servers.add(child);
  const replies = [];
  const listened = [];
  child.on('message', (m) => {
    if (m === null || typeof m !== 'object' || typeof m.type !== 'string' || !m.type.startsWith(MESSAGE)) return;
    if (m.type === `${MESSAGE}listening`) listened.push(m.port);
    else if (replies.length > 0 && replies[0].type === m.type) replies.shift().resolve(m);
  });
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      servers.delete(child);
      server.exited = signal || `code ${code}`;
      for (const r of replies.splice(0)) r.reject(new Error(`the server ended (${server.exited})`));
      resolve();
    });
  });
  child.on('error', (err) => {
    servers.delete(child);
    server.exited = err.message;
  });
  server.request = (type) => new Promise((resolve, reject) => {
    if (server.exited !== null || !child.connected) {
      reject(new Error(`the server is gone (${server.exited || 'IPC closed'})`));
      return;
    }
    const timer = setTimeout(() => reject(new Error(`the server did not answer ${type} over IPC`)), IPC_TIMEOUT_MS);
    replies.push({
      type: `${MESSAGE}${type}`,
      resolve: (m) => {
        clearTimeout(timer);
        resolve(m);
      },
      reject,
    });
    child.send({ type: `${MESSAGE}${type}` });
  });
  server.stop = async () => {
    if (server.exited === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
  };

  // Up when it reported listening on $PORT (or --port), or on another port
  // when nothing listens on that one, or when a connection to it succeeds
  // (a cluster primary does not listen itself).
  const started = Date.now();
  while (server.port === null) {
    if (server.exited !== null) {
      throw new Error(`${opts.server} ended (${server.exited}) before it accepted connections on 127.0.0.1`);
    }
    if (Date.now() - started > START_TIMEOUT_MS) {
      await server.stop();
      throw new Error(`${opts.server} accepted no connection on 127.0.0.1 within ${START_TIMEOUT_MS / 1000} s ` +
                      '(it must listen on $PORT, or give --port)');
    }
    if (listened.includes(port) || await canConnect(port)) {
      server.port = port;
    } else if (listened.length > 0 && opts.port === null && Date.now() - started > 1000) {
      server.port = listened[0];
    } else {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return server;
}

/** One GET <path> on a fresh connection: { status, headers (Date aside), body }. */
function fetchOnce(port, urlPath) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => {
        const headers = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (res.rawHeaders[i].toLowerCase() !== 'date') headers.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
        }
        resolve({ status: res.statusCode, headers, body: Buffer.concat(chunks) });
      });
      res.on('error', reject);
    });
    req.setTimeout(5000, () => req.destroy(new Error(`no response to GET ${urlPath} within 5 s`)));
    req.on('error', reject);
  });
}

function describeDifference(a, b) {
  const out = [];
  if (a.status !== b.status) out.push(`status ${a.status} / ${b.status}`);
  const only = (x, y) => x.filter((h) => !y.includes(h));
  const headers = [...only(a.headers, b.headers).map((h) => `plain has "${h}"`),
                   ...only(b.headers, a.headers).map((h) => `patched has "${h}"`)];
  if (headers.length > 0) out.push(headers.join(', '));
  if (!a.body.equals(b.body)) out.push(`bodies differ (${a.body.length} and ${b.body.length} bytes)`);
  return out.join('; ');
}

// ---------------------------------------------------------------------------
// One run

async function measure(opts, binary, side, state) {
  const server = await startServer(opts, binary, side);
  try {
    const response = await fetchOnce(server.port, opts.path);
    if (response.status < 200 || response.status > 299) {
      throw new Error(`GET ${opts.path} answered ${response.status} on the ${side} server: ` +
                      'give a --path that answers 2xx');
    }
    if (state.responses[side] === undefined) state.responses[side] = response;
    const pin = common.pinning();
    const load = { port: server.port, path: opts.path, connections: opts.connections, cpu: pin ? pin.client : undefined };
    if (opts.warmup > 0) {
      common.checkLoad(await benchmarkers.run(opts.benchmarker, { ...load, duration: opts.warmup }),
                       NaN, opts.connections, 'warm-up');
    }
    await server.request('reset');
    const before = await server.request('usage');
    const result = await benchmarkers.run(opts.benchmarker, { ...load, duration: opts.duration });
    const after = await server.request('usage');
    common.checkLoad(result, NaN, opts.connections, 'run');
    const cpuMicros = (after.cpu.user - before.cpu.user) + (after.cpu.system - before.cpu.system);
    return {
      rate: result.rate,
      time: result.seconds,
      cpu: cpuMicros / result.requests,
      busy: cpuMicros / (result.seconds * 1e6),
      requests: result.requests,
      stats: after.stats,
      native: after.native,
    };
  } finally {
    await server.stop();
  }
}

function addStats(total, s) {
  if (s === null || s === undefined) return total;
  const out = total || { fast: 0, partial: 0, writes: 0, fallback: 0, reasons: {} };
  out.fast += s.fast;
  out.writes += s.writes || 0;
  out.partial += s.partial;
  out.fallback += s.fallback;
  for (const [reason, n] of Object.entries(s.reasons || {})) out.reasons[reason] = (out.reasons[reason] || 0) + n;
  return out;
}

// ---------------------------------------------------------------------------

async function main(argv) {
  const opts = parseCommandLine(argv);
  if (opts.help || opts.server === undefined) {
    console.error(usage());
    process.exitCode = opts.help ? 0 : 2;
    return;
  }
  if (!fs.existsSync(opts.server)) throw new Error(`no server file ${opts.server}`);
  if (!benchmarkers.available(opts.benchmarker)) {
    throw new Error(`benchmarker ${opts.benchmarker} not found (wrk: apt-get install wrk)`);
  }
  const { binary, version } = resolveBinary(opts.node);
  const label = opts.server;
  process.on('exit', () => {
    benchmarkers.killAll();
    for (const child of servers) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping`);
      process.exit(130);
    });
  }
  const pin = common.pinning();
  console.error(`${label}: plain against -r fast-response/register (${packagePath}), Node ${version} (${binary}); ` +
                `GET ${opts.path}, ${opts.connections} connections, ${opts.runs} runs of ${opts.duration} s ` +
                `after ${opts.warmup} s of warm-up, ${opts.benchmarker}, ` +
                (pin ? `server on CPU ${pin.server}, load generator on CPU ${pin.client}` :
                  'not pinned (one CPU, no taskset, or FAST_RESPONSE_BENCH_CPUS=none): numbers are unreliable'));

  const rows = [];
  const state = { responses: {} };
  let fastTotal = null;
  const started = Date.now();
  for (let run = 0; run < opts.runs; run++) {
    for (const side of ['plain', 'patched']) {
      const r = await measure(opts, binary, side, state);
      if (side === 'patched' && r.native === false) {
        console.error('warning: the addon did not load in the server: every call took Node\'s path ' +
                      '(npm run rebuild in the package)');
      }
      fastTotal = addStats(fastTotal, r.stats);
      const row = {
        binary: 'node',
        filename: label,
        configuration: `path=${opts.path} c=${opts.connections} method=${side}`,
        rate: r.rate,
        time: r.time,
        cpu: r.cpu,
      };
      rows.push(row);
      const fast = r.stats ? `, fast path ${r.stats.fast + r.stats.partial}/${r.stats.fast + r.stats.partial + r.stats.fallback}` : '';
      console.error(`[${Math.round((Date.now() - started) / 1000)} s | run ${run + 1}/${opts.runs}] ${side}: ` +
                    `${stats.fmtRate(r.rate)} res/s, ${stats.fmt(r.cpu, 2)} µs cpu/res, ` +
                    `server busy ${stats.fmt(r.busy * 100, 0)} %${fast}`);
    }
  }
  if (opts.csv) fs.writeFileSync(opts.csv, `${[stats.CSV_HEADER, ...rows.map(stats.csvRow)].join('\n')}\n`);

  const { plain, patched } = state.responses;
  const difference = describeDifference(plain, patched);
  if (difference !== '') {
    console.error(`note: the first responses differ between plain and patched: ${difference} ` +
                  '(content that changes per request, or a difference to report)');
  }
  if (fastTotal !== null) {
    const served = fastTotal.fast + fastTotal.partial + fastTotal.fallback;
    const share = served > 0 ? (fastTotal.fast + fastTotal.partial) / served : 0;
    const reasons = Object.entries(fastTotal.reasons).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`);
    console.error(`fastResponse.stats() under register, measured runs: ${fastTotal.fast} fast, ${fastTotal.partial} ` +
                  `partial, ${fastTotal.fallback} fallback (${stats.fmt(share * 100, 1)} % fast path), ` +
                  `${fastTotal.writes} res.write() chunks framed` +
                  (reasons.length ? `; fallback reasons: ${reasons.join(', ')}` : ''));
    if (share < MIN_FAST_SHARE) {
      if (fastTotal.writes > 0) {
        // A streamed response (its head sent by its first write) ends with
        // Node's end(); its write() chunks were the package's (found by a
        // new-user check: the other note contradicted the framed count).
        console.error('note: these responses\' end() went to Node\'s own (their head was sent with a res.write()); ' +
                      'their res.write() chunks, counted above, were framed by the package');
      } else {
        console.error('note: these responses went to Node\'s own end() (see "How it works, and when it steps aside" ' +
                      'in the README): register cannot speed them up');
      }
    }
  }
  process.stdout.write(`\nNode ${version}, ${label}, GET ${opts.path}: patched = -r fast-response/register, ` +
                       'plain = the app as it is\n\n');
  process.stdout.write(stats.formatTable(stats.comparisons(rows)));
}

module.exports = { parseCommandLine };

if (require.main === module) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(`app.js: ${err.message}`);
    process.exit(1);
  });
}
