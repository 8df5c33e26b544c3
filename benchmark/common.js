'use strict';

// The benchmark harness, in the shape of Node's benchmark/common.js.
//
//   const bench = common.createBenchmark(main, { len: [4, 64], c: [50] });
//   function main({ len, c }) { ... bench.http({ port, connections: c }, done) }
//
// Every combination of config values is one run, each in a fresh process
// (the "child"), pinned to one CPU while the load generator is pinned to
// another (BENCHMARKING.md). Values can be chosen on the command line:
//
//   node benchmark/http/end-string.js len=64 method=fastEnd
//   node benchmark/http/end-string.js --set len=64 --set len=1024
//
// Keys the file does not declare are "extra options" for the harness
// (`benchmarker=wrk|autocannon`, `warmup=<seconds>`). Run directly, a file
// prints one CSV row per run on stdout, as compare.js does: "binary"
// (here always "node"), "filename", "configuration", "rate" (responses/s),
// "time" (seconds measured), "cpu_us" (server CPU µs per response). Under
// compare.js the child reports over IPC instead.
//
// Environment:
//   FAST_RESPONSE_BENCH_CPUS  "<server>,<client>" CPUs to pin to, or "none";
//                             default: the first two CPUs this process may use
//   FAST_RESPONSE_PATH        the fast-response package to benchmark
//                             (default: this repository)

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const benchmarkers = require('./_http-benchmarkers');
const { CSV_HEADER, csvRow } = require('./_stats');

const CHILD_ENV = 'FAST_RESPONSE_BENCH_CHILD';
const PIN_ENV = 'FAST_RESPONSE_BENCH_PIN';
const DEFAULT_WARMUP_S = 1;

// ---------------------------------------------------------------------------
// Configurations

/**
 * Parses `key=value` and `--set key=value` arguments (a key given several
 * times gives several values) and `--list`. Values of keys whose declared
 * values are numbers become numbers.
 */
function parseArgs(argv, configs) {
  const cli = {};
  const extra = {};
  let list = false;
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    if (arg === '--list') {
      list = true;
      continue;
    }
    if (arg === '--set') arg = argv[++i];
    const match = /^([^=]+)=([\s\S]*)$/.exec(arg === undefined ? '' : arg);
    if (match === null) throw new Error(`bad argument: ${arg} (expected key=value or --set key=value)`);
    const [, key, raw] = match;
    if (Object.prototype.hasOwnProperty.call(configs, key)) {
      const numeric = typeof configs[key][0] === 'number';
      const value = numeric ? Number(raw) : raw;
      if (numeric && !Number.isFinite(value)) throw new Error(`${key}=${raw}: a number is expected`);
      (cli[key] = cli[key] || []).push(value);
    } else {
      extra[key] = raw;
    }
  }
  return { configs: { ...configs, ...cli }, extra, list };
}

/**
 * Every combination of the config values, in the declared key order with
 * `method` varying fastest, so that a run of a file interleaves the methods
 * compared with each other.
 */
function combinations(configs) {
  const keys = Object.keys(configs).filter((k) => k !== 'method');
  if (Object.prototype.hasOwnProperty.call(configs, 'method')) keys.push('method');
  let queue = [{}];
  for (const key of keys) {
    const next = [];
    for (const config of queue) {
      for (const value of configs[key]) {
        if (typeof value !== 'number' && typeof value !== 'string') {
          throw new TypeError(`config "${key}" has a value of type ${typeof value}`);
        }
        next.push({ ...config, [key]: value });
      }
    }
    queue = next;
  }
  return queue;
}

function configString(config) {
  return Object.entries(config).map(([k, v]) => `${k}=${v}`).join(' ');
}

function configArgs(config) {
  return Object.entries(config).map(([k, v]) => `${k}=${v}`);
}

// ---------------------------------------------------------------------------
// CPU pinning

function parseCpuList(list) {
  const cpus = [];
  for (const part of list.trim().split(',')) {
    if (part === '') continue;
    const [a, b] = part.split('-').map(Number);
    for (let c = a; c <= (b === undefined ? a : b); c++) cpus.push(c);
  }
  return cpus;
}

function allowedCpus() {
  try {
    const status = fs.readFileSync('/proc/self/status', 'utf8');
    const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(status);
    if (m !== null) return parseCpuList(m[1]);
  } catch {
    // not Linux
  }
  return [];
}

let pinningCache;
/**
 * The CPUs for the server and for the load generator, { server, client },
 * or null when they cannot be kept apart (one CPU, no taskset, or
 * FAST_RESPONSE_BENCH_CPUS=none).
 */
function pinning() {
  if (pinningCache !== undefined) return pinningCache;
  const env = process.env.FAST_RESPONSE_BENCH_CPUS;
  let cpus;
  if (env === 'none') cpus = [];
  else if (env !== undefined && env !== '') cpus = env.split(',').map(Number);
  else cpus = allowedCpus();
  const taskset = spawnSync('taskset', ['-V'], { stdio: 'ignore' });
  pinningCache = cpus.length >= 2 && !taskset.error ? { server: cpus[0], client: cpus[1] } : null;
  return pinningCache;
}

/**
 * Starts one run of a benchmark file in a child process: `binary
 * [execArgv...] file key=value...`, pinned to the server CPU, with IPC for
 * the report. The child's stdout goes to stderr: stdout is for CSV. Returns
 * the ChildProcess.
 */
function spawnChild({ binary = process.execPath, execArgv = [], file, args, env = {} }) {
  const pin = pinning();
  const childEnv = { ...process.env, ...env, [CHILD_ENV]: '1' };
  if (pin !== null) childEnv[PIN_ENV] = `${pin.server},${pin.client}`;
  else delete childEnv[PIN_ENV];
  const [cmd, argv] = pin !== null ?
    ['taskset', ['-c', String(pin.server), binary, ...execArgv, file, ...args]] :
    [binary, [...execArgv, file, ...args]];
  return spawn(cmd, argv, { env: childEnv, stdio: ['ignore', 2, 2, 'ipc'] });
}

const activeChildren = new Set();

/**
 * Runs one configuration of `file` in a child and resolves to its message:
 * { type: 'report', ... } or { type: 'skip', reason }. Rejects when the
 * child fails, and kills it when it outlives `timeoutMs`.
 */
function runChild(options, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawnChild(options);
    activeChildren.add(child);
    let message = null;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 2000).unref();
    }, timeoutMs);
    child.on('message', (m) => {
      if (m && typeof m === 'object' && (m.type === 'report' || m.type === 'skip' || m.type === 'error')) {
        message = m;
      }
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      activeChildren.delete(child);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      activeChildren.delete(child);
      const what = `${path.basename(options.file)} ${options.args.join(' ')}`;
      if (message !== null && message.type === 'error') {
        reject(new Error(message.message));
      } else if (code === 0 && message !== null) {
        resolve(message);
      } else {
        reject(new Error(`${what} ${timedOut ? `hung: killed after ${timeoutMs / 1000} s` :
          `ended with ${signal || `code ${code}`}`}${message === null ? ' without a result' : ''}`));
      }
    });
  });
}

/** Kills the runs this process started (for Ctrl-C and errors). */
function killChildren() {
  for (const child of activeChildren) {
    try {
      child.kill('SIGTERM');
    } catch {
      // gone
    }
  }
}

// ---------------------------------------------------------------------------
// The probe: one connection, two requests, raw bytes checked

function parseResponse(buf) {
  const end = buf.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(lines[0]);
  if (status === null) throw new Error(`bad status line: ${JSON.stringify(lines[0])}`);
  const headers = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`bad header line: ${JSON.stringify(line)}`);
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  if (headers['transfer-encoding'] !== undefined) {
    if (headers['transfer-encoding'] !== 'chunked') {
      throw new Error(`Transfer-Encoding: ${headers['transfer-encoding']}: the benchmark expects ` +
                      'a body of known length or chunked');
    }
    return parseChunked(buf, end + 4, Number(status[1]), headers);
  }
  const length = Number(headers['content-length']);
  if (!Number.isInteger(length)) throw new Error('no Content-Length in the response');
  const size = end + 4 + length;
  if (buf.length < size) return null;
  return { status: Number(status[1]), headers, body: buf.subarray(end + 4, size), size };
}

// A chunked body (RFC 9112 §7.1) from `at`: the chunks' data joined, or
// null while incomplete. Every response of a run must have the same chunks
// (the byte count check needs one size).
function parseChunked(buf, at, status, headers) {
  const data = [];
  for (;;) {
    const line = buf.indexOf('\r\n', at);
    if (line === -1) return null;
    const size = parseInt(buf.subarray(at, line).toString('latin1'), 16);
    if (!Number.isInteger(size)) throw new Error('bad chunk-size line');
    const next = line + 2 + size + 2;
    if (buf.length < next) return null;
    if (buf.subarray(next - 2, next).toString('latin1') !== '\r\n') throw new Error('chunk without its CRLF');
    if (size === 0) return { status, headers, body: Buffer.concat(data), size: next };
    data.push(buf.subarray(line + 2, line + 2 + size));
    at = next;
  }
}

/**
 * Sends two requests, one after the other, on one keep-alive connection
 * and checks both responses: status, the expected header fields, a
 * Content-Length equal to the body's length, the body's bytes, keep-alive,
 * and equal sizes. Resolves to the size in bytes of one response. With
 * `close`: one request with Connection: close, its response checked the
 * same way but for Connection: close (the last response of each burst
 * under `closeAfterBurst`, shorter than a keep-alive one).
 */
function probe(port, urlPath, expect, close = false) {
  const count = close ? 1 : 2;
  return new Promise((resolve, reject) => {
    const request = `GET ${urlPath} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
    const socket = net.connect(port, '127.0.0.1');
    const responses = [];
    let buf = Buffer.alloc(0);
    let settled = false;
    const done = (err, value) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (err) reject(checkError(`response check${close ? ' (Connection: close)' : ''} failed: ${err.message}`));
      else resolve(value);
    };
    socket.setTimeout(5000, () => done(new Error('no complete response within 5 s')));
    socket.on('connect', () => socket.write(request));
    socket.on('error', done);
    socket.on('close', () => done(new Error(`connection closed after ${responses.length} of ${count} responses`)));
    socket.on('data', (data) => {
      buf = Buffer.concat([buf, data]);
      try {
        for (let r = parseResponse(buf); r !== null; r = parseResponse(buf)) {
          buf = buf.subarray(r.size);
          check(r);
          responses.push(r);
          if (responses.length === count) {
            if (responses[0].size !== r.size) {
              throw new Error(`response sizes differ: ${responses[0].size} and ${r.size}`);
            }
            done(null, r.size);
            return;
          }
          socket.write(request);
        }
      } catch (err) {
        done(err);
      }
    });
    function check(r) {
      if (r.status !== expect.status) throw new Error(`status ${r.status}, expected ${expect.status}`);
      for (const [name, value] of Object.entries(expect.headers || {})) {
        const got = r.headers[name.toLowerCase()];
        if (got !== String(value)) throw new Error(`${name}: ${got}, expected ${value}`);
      }
      if (/(^|\W)close($|\W)/i.test(r.headers.connection || '') !== close) {
        throw new Error(close ? `Connection: ${r.headers.connection}, expected close` :
          'Connection: close on a keep-alive request');
      }
      // Content-Length equal to the body's length, or chunked (data joined).
      const body = Buffer.isBuffer(expect.body) ? expect.body : Buffer.from(expect.body);
      if (!r.body.equals(body)) {
        throw new Error(`body of ${r.body.length} bytes differs from the expected ${body.length} bytes`);
      }
    }
  });
}

// ---------------------------------------------------------------------------
// Benchmark

class Benchmark {
  constructor(main, configs, options = {}) {
    this.main = main;
    this.options = options;
    this.name = path.relative(__dirname, require.main.filename).split(path.sep).join('/');
    const normalized = {};
    for (const [key, values] of Object.entries(configs)) {
      normalized[key] = Array.isArray(values) ? values : [values];
    }
    this.declared = normalized;
    let parsed;
    try {
      parsed = parseArgs(process.argv.slice(2), normalized);
    } catch (err) {
      console.error(`${this.name}: ${err.message}`);
      process.exit(1);
    }
    const { configs: chosen, extra, list } = parsed;
    this.extra = extra;
    this.queue = combinations(chosen);
    this.config = null;
    this._started = null;
    process.nextTick(() => {
      if (list) {
        process.stdout.write(`${JSON.stringify(this.queue.map(configArgs))}\n`);
      } else if (process.env[CHILD_ENV] === '1') {
        this._runChild();
      } else {
        this._runAll().catch((err) => {
          console.error(err.message);
          killChildren();
          process.exit(1);
        });
      }
    });
  }

  /** In a child: the one configuration, with the harness's guards. */
  _runChild() {
    if (this.queue.length !== 1) {
      this.fail(new Error(`a child runs one configuration, this has ${this.queue.length}`));
      return;
    }
    this.config = this.queue[0];
    const stop = (code) => {
      benchmarkers.killAll();
      process.exit(code);
    };
    process.on('exit', () => benchmarkers.killAll());
    process.on('SIGINT', () => stop(130));
    process.on('SIGTERM', () => stop(143));
    // The launcher is gone: nothing to report to.
    process.on('disconnect', () => stop(1));
    try {
      const r = this.main(this.config);
      if (r && typeof r.then === 'function') r.catch((err) => this.fail(err));
    } catch (err) {
      this.fail(err);
    }
  }

  /** Run directly: every configuration in its own child, CSV on stdout. */
  async _runAll() {
    if (pinning() === null) {
      console.error('note: server and load generator are not pinned to different CPUs ' +
                    '(one CPU, no taskset or FAST_RESPONSE_BENCH_CPUS=none): numbers are unreliable');
    }
    const stop = () => {
      killChildren();
      process.exit(130);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    console.log(CSV_HEADER);
    const extraArgs = Object.entries(this.extra).map(([k, v]) => `${k}=${v}`);
    for (const config of this.queue) {
      const message = await runChild({ file: require.main.filename, args: [...configArgs(config), ...extraArgs] },
                                     childTimeoutMs(config, this.extra));
      if (message.type === 'skip') {
        console.error(`skipped ${this.name} ${configString(config)}: ${message.reason}`);
        continue;
      }
      console.log(csvRow({ binary: 'node', ...message }));
    }
  }

  _send(message, exitCode) {
    if (typeof process.send === 'function' && process.connected) {
      process.send(message, () => process.exit(exitCode));
    } else {
      if (message.type === 'report') console.log(csvRow({ binary: 'node', ...message }));
      else if (message.type === 'skip') console.error(`skipped ${this.name}: ${message.reason}`);
      else console.error(message.message);
      process.exit(exitCode);
    }
  }

  /** Reports a result and ends the child. `cpu`: server CPU µs per response. */
  report({ rate, time, cpu = NaN, ...details }) {
    this._send({
      type: 'report',
      filename: this.name,
      configuration: configString(this.config),
      rate,
      time,
      cpu,
      ...details,
    }, 0);
  }

  /** Ends the child without a result, saying why (a method that does not exist). */
  skip(reason) {
    this._send({ type: 'skip', filename: this.name, configuration: configString(this.config), reason }, 0);
  }

  /** Ends the child with an error: the run failed and must not count. */
  fail(err) {
    benchmarkers.killAll();
    // The harness's own checks say all in their message; anything else
    // is a bug worth its stack.
    const message = err && err.check ? err.message : (err && err.stack) || String(err);
    this._send({ type: 'error', message: `${this.name} ${configString(this.config || {})}: ${message}` }, 1);
  }

  /** Node's bench.start() / bench.end(operations) for non-HTTP benchmarks. */
  start() {
    this._started = process.hrtime.bigint();
  }

  end(operations) {
    const seconds = Number(process.hrtime.bigint() - this._started) / 1e9;
    this.report({ rate: operations / seconds, time: seconds });
  }

  /**
   * Loads http://127.0.0.1:<port><path> with the load generator named by
   * `benchmarker=` (wrk by default), pinned to the other CPU, and reports
   * responses/s and server CPU µs per response. Before measuring: the
   * probe checks the responses against `expect` ({ status, headers, body }),
   * then a warm-up load of `warmup=` seconds (default 1) is discarded.
   * Any socket error, non-2xx response, or a byte count that does not fit
   * the probe's response size fails the run.
   *
   * options: { port, path = '/', connections (default: config c, 50),
   *   duration (default: config duration, 5), expect,
   *   pipeline: requests each connection sends in one write (default 1),
   *   closeAfterBurst: with pipeline > 1, the last request of each burst
   *     says Connection: close, so each burst has a connection of its own
   *     (wrk only),
   *   cpuUsage: () => {user, system} (µs, default process.cpuUsage();
   *     cluster.js adds its workers'), may return a Promise,
   *   before(): called after the warm-up, right before measuring,
   *   after(result): checks the run (throw to fail it), may return extra
   *     fields for the report }
   * `callback` runs once measured (close the server there); the child then
   * reports and exits. Returns a Promise of the report.
   */
  http(options, callback) {
    const promise = this._http(options).then(async (result) => {
      if (typeof callback === 'function') await callback(result);
      this.report(result);
      return result;
    });
    promise.catch((err) => this.fail(err));
    return promise;
  }

  async _http(options) {
    const conf = this.config || {};
    const name = this.extra.benchmarker || process.env.FAST_RESPONSE_BENCHMARKER || 'wrk';
    const duration = Number(options.duration ?? conf.duration ?? 5);
    const connections = Number(options.connections ?? conf.c ?? 50);
    const warmup = Number(this.extra.warmup ?? DEFAULT_WARMUP_S);
    const urlPath = options.path || '/';
    const cpuUsage = options.cpuUsage || (() => process.cpuUsage());
    const pin = process.env[PIN_ENV];
    const client = pin ? Number(pin.split(',')[1]) : undefined;
    const pipeline = Number(options.pipeline ?? 1);
    const closeAfterBurst = options.closeAfterBurst === true && pipeline > 1;
    const load = { port: options.port, path: urlPath, connections, cpu: client, pipeline, closeAfterBurst };

    const size = options.expect ? await probe(options.port, urlPath, options.expect) : NaN;
    const closing = closeAfterBurst && options.expect ?
      { size: await probe(options.port, urlPath, options.expect, true), pipeline, connections } : null;
    if (warmup > 0) {
      checkLoad(await benchmarkers.run(name, { ...load, duration: warmup }), size, connections * pipeline, 'warm-up',
                closing);
    }
    if (options.before) await options.before();
    const cpu0 = await cpuUsage();
    const result = await benchmarkers.run(name, { ...load, duration });
    const cpu1 = await cpuUsage();
    checkLoad(result, size, connections * pipeline, 'run', closing);
    const details = options.after ? (await options.after(result)) || {} : {};
    const cpuMicros = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system);
    return {
      rate: result.rate,
      time: result.seconds,
      cpu: cpuMicros / result.requests,
      // Share of the measured time the server was on a CPU: near 1 when it
      // was the bottleneck; lower when the client was, or when something
      // else took the server's CPU (a noisy machine).
      busy: cpuMicros / (result.seconds * 1e6),
      requests: result.requests,
      responseBytes: size,
      benchmarker: name,
      latencyP50: result.latencyP50,
      latencyP99: result.latencyP99,
      ...details,
    };
  }
}

function checkError(message) {
  const err = new Error(message);
  err.check = true;
  return err;
}

/** A load run counts only without errors and with whole, right-sized responses. */
function checkLoad(result, size, inFlight, what, closing = null) {
  const bad = Object.entries(result.errors).filter(([, n]) => n > 0);
  if (bad.length > 0) {
    throw checkError(`${result.benchmarker} ${what}: ${bad.map(([k, n]) => `${n} ${k} errors`).join(', ')} ` +
                    `in ${result.requests} responses (status: non-2xx responses)`);
  }
  if (!(result.requests > 0)) throw checkError(`${result.benchmarker} ${what}: no responses`);
  // Every response is as large as the probe's (the Date field has a fixed
  // length); at the end each connection may hold one partial response.
  // With `closing` ({ size, pipeline, connections }: a connection per
  // burst), the last response of each burst is `closing.size` long: the
  // bursts are at most requests / pipeline, and at least those left when
  // each connection stopped within a burst.
  let shorter = [0, 0];
  if (closing !== null) {
    const d = size - closing.size;
    const { pipeline, connections } = closing;
    shorter = [Math.floor(Math.max(0, result.requests - connections * (pipeline - 1)) / pipeline) * d,
               Math.ceil(result.requests / pipeline) * d];
  }
  if (Number.isFinite(size) && Number.isFinite(result.bytes) &&
      (result.bytes < result.requests * size - shorter[1] ||
       result.bytes > (result.requests + inFlight) * size - shorter[0])) {
    throw checkError(`${result.benchmarker} ${what}: ${result.bytes} bytes for ${result.requests} ` +
                    `responses of ${size} bytes`);
  }
}

/** Longest a run of `config` may take before it counts as hung. */
function childTimeoutMs(config, extra) {
  const duration = Number(config.duration ?? 5);
  const warmup = Number(extra.warmup ?? DEFAULT_WARMUP_S);
  return (duration + warmup + 60) * 1000;
}

function createBenchmark(main, configs, options) {
  return new Benchmark(main, configs, options);
}

module.exports = {
  createBenchmark,
  Benchmark,
  parseArgs,
  combinations,
  configString,
  pinning,
  spawnChild,
  runChild,
  killChildren,
  childTimeoutMs,
  checkLoad,
  probe,
};
