'use strict';

// The HTTP load generators bench.http() drives, as Node's
// benchmark/_http-benchmarkers.js: wrk (the default, Debian package `wrk`)
// and autocannon (npm; found in this repository's node_modules/.bin or on
// PATH). Each returns exact counts, so that a run can be checked: responses,
// bytes received, socket errors, non-2xx responses.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const running = new Set();

function onPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir === '') continue;
    const full = path.join(dir, name);
    try {
      fs.accessSync(full, fs.constants.X_OK);
      return full;
    } catch {
      // not here
    }
  }
  return null;
}

const wrk = {
  name: 'wrk',
  executable() {
    return onPath('wrk');
  },
  install: 'apt-get install wrk',
  args({ port, path: urlPath, connections, duration, threads, pipeline, closeAfterBurst }) {
    const depth = Math.max(1, Math.round(pipeline || 1));
    return [
      '-d', `${Math.max(1, Math.round(duration))}s`,
      '-c', String(connections),
      '-t', String(Math.max(1, Math.min(connections, threads))),
      '-s', path.join(__dirname, depth > 1 ? '_wrk-pipeline.lua' : '_wrk-report.lua'),
      `http://127.0.0.1:${port}${urlPath}`,
      ...(depth > 1 ? ['--', String(depth), ...(closeAfterBurst ? ['close'] : [])] : []),
    ];
  },
  parse(stdout) {
    const line = stdout.split('\n').find((l) => l.startsWith('FAST_RESPONSE_WRK '));
    if (line === undefined) return null;
    const s = JSON.parse(line.slice('FAST_RESPONSE_WRK '.length));
    return {
      requests: s.requests,
      seconds: s.duration_us / 1e6,
      bytes: s.bytes,
      errors: {
        connect: s.connect,
        read: s.read,
        write: s.write,
        timeout: s.timeout,
        status: s.status,
      },
      latencyP50: s.latency_p50_us / 1000,
      latencyP99: s.latency_p99_us / 1000,
    };
  },
};

const autocannon = {
  name: 'autocannon',
  executable() {
    const local = path.join(root, 'node_modules', '.bin', 'autocannon');
    return fs.existsSync(local) ? local : onPath('autocannon');
  },
  install: 'npm install --no-save autocannon',
  args({ port, path: urlPath, connections, duration, pipeline }) {
    return [
      '-d', String(Math.max(1, Math.round(duration))),
      '-c', String(connections),
      '-p', String(Math.max(1, Math.round(pipeline || 1))),
      '-j', '-n',
      `http://127.0.0.1:${port}${urlPath}`,
    ];
  },
  parse(stdout) {
    let s;
    try {
      s = JSON.parse(stdout.slice(stdout.indexOf('{')));
    } catch {
      return null;
    }
    if (!s || !s.requests) return null;
    return {
      requests: s.requests.total,
      seconds: s.duration,
      bytes: s.throughput ? s.throughput.total : NaN,
      errors: {
        connect: 0,
        read: s.errors || 0,
        write: s.resets || 0,
        timeout: s.timeouts || 0,
        status: s.non2xx || 0,
        mismatch: s.mismatches || 0,
      },
      latencyP50: s.latency ? s.latency.p50 : NaN,
      latencyP99: s.latency ? s.latency.p99 : NaN,
    };
  },
};

const benchmarkers = { wrk, autocannon };

/**
 * Runs `name` against http://127.0.0.1:<port><path> with `connections`
 * keep-alive connections for `duration` seconds, pinned to CPU `cpu`
 * (taskset) when it is a number; `pipeline` requests in each write, and
 * with `closeAfterBurst` (wrk only) a connection per burst, its last
 * request with Connection: close. Resolves to { benchmarker, requests,
 * seconds, rate, bytes, errors, latencyP50, latencyP99 } (latency in ms);
 * rejects when the tool is missing, fails or prints no result.
 */
function run(name, { port, path: urlPath = '/', connections, duration, cpu, pipeline, closeAfterBurst }) {
  const b = benchmarkers[name];
  if (b === undefined) {
    return Promise.reject(new Error(
      `unknown benchmarker "${name}": use ${Object.keys(benchmarkers).join(' or ')}`));
  }
  if (closeAfterBurst && name !== 'wrk') {
    return Promise.reject(new Error(`benchmarker ${name} cannot close a connection after each burst: use wrk`));
  }
  const exe = b.executable();
  if (exe === null) {
    return Promise.reject(new Error(`benchmarker ${name} not found: ${b.install}`));
  }
  const pinned = typeof cpu === 'number';
  const args = b.args({
    port,
    path: urlPath,
    connections,
    duration,
    pipeline,
    closeAfterBurst,
    threads: pinned ? 1 : (os.availableParallelism ? os.availableParallelism() : os.cpus().length),
  });
  const [cmd, argv] = pinned ? ['taskset', ['-c', String(cpu), exe, ...args]] : [exe, args];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    child.on('error', (err) => {
      running.delete(child);
      reject(err);
    });
    child.on('close', (code, signal) => {
      running.delete(child);
      const result = code === 0 ? b.parse(stdout) : null;
      if (result === null) {
        reject(new Error(`${name} ${argv.join(' ')} ended with ${signal || `code ${code}`} ` +
                         `and no result:\n${stdout}${stderr}`));
        return;
      }
      resolve({ benchmarker: name, ...result, rate: result.requests / result.seconds });
    });
  });
}

/** Kills the load generators still running (on exit, Ctrl-C, errors). */
function killAll() {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
}

function available(name) {
  const b = benchmarkers[name];
  return b !== undefined && b.executable() !== null;
}

module.exports = { run, killAll, available, names: Object.keys(benchmarkers) };
