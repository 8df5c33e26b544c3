'use strict';

// Where the server's time per HTTP response goes, in microseconds: sampled
// by perf's cpu-clock (a software event: it needs no hardware counters,
// which this VM does not have), split into the kernel, JavaScript (the
// JIT's code, named by --perf-basic-prof), the node binary (V8's builtins
// and runtime, Node's C++, the addon's crossings), the addon, libc and the
// rest, and by function. The counterpart of benchmark/instructions.js,
// which counts user-space instructions only: it says what a path costs in
// time, kernel included, where callgrind weighs an instruction of a
// memcpy of 8 KiB as one of a hash lookup and does not see the kernel.
//
//   node benchmark/profile.js [--len 64] [--set key=value ...]
//        [--short 4] [--long 12] [--top 25] [--stack name]
//        file=method[,key=value...] ...
//
//   file=method    a case of benchmark/http/ and its method, as in
//                  instructions.js (e.g. stream=fastWrite,tick=one)
//   --short, --long  the two run lengths in seconds (default 4 and 12)
//   --top n        the functions whose time differs most from the first
//                  case's, or with one case its n costliest (default 25;
//                  0: none)
//   --stack name   also record call stacks (perf record -g) and, for the
//                  samples with a frame whose function's name contains
//                  `name` (e.g. joinUtf8, Builtins_KeyedLoadIC_Megamorphic),
//                  print their time per response, the functions that ran
//                  beneath that frame (the samples' leaves) and the first
//                  JavaScript function above it (who called it), each the
//                  `--top` largest (at least 10)
//
// Each case file runs as one benchmark child (common.js), the server
// pinned to one CPU and wrk to another as compare.js pins them, under
// `perf record -e cpu-clock` at one sample per 100 µs of a CPU's time; the
// samples of the load generator are left out. Like instructions.js, two
// runs (short and long) and (samples(long) - samples(short)) × 100 µs /
// (responses(long) - responses(short)): start-up, the warm-up load and the
// JIT's warm-up cancel. A sampled figure moves between runs (on this VM
// the kernel's part most: waking the client costs more when it is idle,
// so a slower server also pays more per response there); run cases
// interleaved and more than once before reading a difference.
//
// Needs perf (Debian: apt-get install linux-perf) and a
// perf_event_paranoid that lets this user sample (root, or 1 or less).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { parseArgs } = require('node:util');

// One sample per this many nanoseconds of a CPU's time.
const PERIOD_NS = 100000;
const MIN_SHORT_S = 2;
const ADDON = path.join('build', 'Release', 'fast_response.node');

/** The CPUs of common.js's pinning (FAST_RESPONSE_BENCH_CPUS or the first two). */
function cpus() {
  const env = process.env.FAST_RESPONSE_BENCH_CPUS;
  if (env === 'none') return null;
  const list = env ? env.split(',').map(Number) : [...Array(os.availableParallelism()).keys()];
  return list.length >= 2 ? list.slice(0, 2) : null;
}

/** The kind of time a sample's shared object stands for. */
function bucketOf(dso) {
  if (dso === '[kernel.kallsyms]' || dso.startsWith('[kernel')) return 'kernel';
  if (dso.startsWith('[JIT]') || /perf-\d+\.map$/.test(dso)) return 'JavaScript';
  if (dso.endsWith(ADDON) || dso.endsWith('fast_response.node')) return 'addon';
  if (path.basename(dso) === path.basename(process.execPath) || dso === process.execPath) return 'node';
  if (/\blib(c|m|pthread)[.-]/.test(path.basename(dso))) return 'libc';
  return 'other';
}
const BUCKETS = ['kernel', 'JavaScript', 'node', 'addon', 'libc', 'other'];

// The perf processes now going (`perf record` and `perf script`, each its
// own process group, killed whole on Ctrl-C), and whether Ctrl-C or
// SIGTERM came.
const recording = new Set();
let interrupted = false;

/** Kills `child`'s process group (perf and what it runs). */
function killGroup(child) {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // (The group is gone already.)
  }
}

/**
 * `perf` with `args`, in a process group of its own (perf, and for a
 * recording the server and wrk), in `recording` until it ends: { child,
 * closed }, closed a promise of { error, stderr, status, signal } as
 * spawnSync() gives them. Its stdout is the caller's to read.
 */
function perf(args, env = process.env) {
  const child = spawn('perf', args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  recording.add(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
  const closed = new Promise((resolve) => {
    const done = (error, status, signal) => {
      recording.delete(child);
      resolve({ error, stderr, status, signal });
    };
    child.on('error', (error) => done(error, null, null));
    child.on('close', (status, signal) => done(undefined, status, signal));
  });
  return { child, closed };
}

/**
 * `perf record` with `args`: { error, stdout, stderr, status, signal } as
 * spawnSync() gives them; killed after `timeoutMs`.
 */
async function record(args, env, timeoutMs) {
  const { child, closed } = perf(args, env);
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
  const timer = setTimeout(() => killGroup(child), timeoutMs);
  const r = await closed;
  clearTimeout(timer);
  return { ...r, stdout };
}

/** The pids of /tmp/perf-<pid>.map files (--perf-basic-prof's symbol maps). */
function perfMaps() {
  const pids = new Set();
  for (const name of fs.readdirSync('/tmp')) {
    const m = /^perf-(\d+)\.map$/.exec(name);
    if (m !== null) pids.add(m[1]);
  }
  return pids;
}

/**
 * Whether process `pid` runs: a zombie does not (a server killed on
 * Ctrl-C whose parent, perf, died too waits for init to reap it, and
 * kill(pid, 0) still succeeds on it: a review found its map left behind).
 */
function alive(pid) {
  try {
    process.kill(Number(pid), 0);
  } catch {
    return false;
  }
  try {
    // "<pid> (<comm>) <state> ...": comm may hold spaces and parentheses.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * One run under perf: { responses, buckets: Map, functions: Map, stack:
 * { total, beneath, callers } } (samples of the server, by bucket and by
 * function; with `stack`, a function name, those with a frame of it: all,
 * by leaf and by first JavaScript caller). The symbol maps the run's
 * processes left are removed whether it succeeds or fails (those of
 * processes still alive, another program's, are left).
 */
async function sample(file, method, seconds, configs, dir, stack) {
  const before = perfMaps();
  try {
    return await sampleOnce(file, method, seconds, configs, dir, stack);
  } finally {
    for (const pid of perfMaps()) {
      if (!before.has(pid) && !alive(pid)) fs.rmSync(`/tmp/perf-${pid}.map`, { force: true });
    }
  }
}

async function sampleOnce(file, method, seconds, configs, dir, stack) {
  if (interrupted) throw new Error(`${file} method=${method}: interrupted`);
  const config = new Map();
  for (const kv of configs) config.set(kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1));
  config.set('method', method);
  config.set('duration', String(seconds));
  const data = path.join(dir, 'perf.data');
  const pin = cpus();
  // (--perf-basic-prof turns V8's log on: kept in `dir`, not in the
  // working directory as isolate-*.log.)
  // (With stacks, interpreted functions get frames of their own too: one
  // running in the interpreter would show as its trampoline, and its
  // caller as the JIT function above it.)
  const server = [process.execPath, '--perf-basic-prof', ...(stack === null ? [] : ['--interpreted-frames-native-stack']),
    '--no-logfile-per-isolate',
    `--logfile=${path.join(dir, 'v8.log')}`, path.join(__dirname, 'http', `${file}.js`),
    ...[...config].map(([k, v]) => `${k}=${v}`)];
  const args = ['record', '-q', ...(stack === null ? [] : ['-g']), '-e', 'cpu-clock', '-c', String(PERIOD_NS), '-o', data, '--',
    ...(pin === null ? server : ['taskset', '-c', String(pin[0]), ...server])];
  const env = { ...process.env, FAST_RESPONSE_BENCH_CHILD: '1' };
  if (pin !== null) env.FAST_RESPONSE_BENCH_PIN = pin.join(',');
  const r = await record(args, env, (seconds + 120) * 1000);
  if (r.error) throw new Error(`perf: ${r.error.message} (apt-get install linux-perf)`);
  if (interrupted) throw new Error(`${file} method=${method}: interrupted`);
  if (/a child runs one configuration/.test(r.stderr + r.stdout)) {
    throw new Error(`${file}=${method}: give one value for each key that has several in benchmark/http/${file}.js ` +
                    '(e.g. stream=fastWrite,tick=one), and a key once (not in both --set and the case, nor --len and --set len=)');
  }
  const row = r.stdout.split('\n').find((line) => line.startsWith('"node"'));
  const skipped = /^skipped .*/m.exec(r.stderr);
  if (r.status === 0 && row === undefined && skipped !== null) throw new Error(skipped[0]);
  if (r.status !== 0 || row === undefined) {
    throw new Error(`${file} method=${method} under perf failed:\n${r.stdout.slice(-1000)}${r.stderr.slice(-2000)}`);
  }
  const fields = row.split(',');
  const responses = Math.round(Number(fields[fields.length - 3]) * Number(fields[fields.length - 2]));
  const out = { responses, ...(await readSamples(data, stack)) };
  fs.rmSync(data, { force: true });
  return out;
}

/** A frame's function as the tables name it: JIT names carry their code's address; one name per function. */
function functionName(sym, dso) {
  return sym.replace(/ 0x[0-9a-f]+$/, '').replace(/^\[unknown\]$/, `[unknown] ${path.basename(dso)}`);
}

/**
 * The samples of perf.data `data`, read from `perf script` as it prints
 * them (with call stacks there are millions of lines): { buckets,
 * functions, stack } as sample() returns them.
 */
async function readSamples(data, stack) {
  const buckets = new Map(BUCKETS.map((b) => [b, 0]));
  const functions = new Map();
  const inStack = { total: new Map([['total', 0]]), beneath: new Map(), callers: new Map() };
  const add = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);
  // One sample: its leaf's bucket and function; with `stack`, its frames,
  // leaf first ({ name, bucket }).
  const count = (frames) => {
    const leaf = frames[0];
    add(buckets, leaf.bucket);
    add(functions, leaf.name);
    if (stack === null) return;
    const at = frames.findIndex((f) => f.name.includes(stack));
    if (at === -1) return;
    add(inStack.total, 'total');
    add(inStack.beneath, at === 0 ? '(the function itself)' : leaf.name);
    const caller = frames.slice(at + 1).find((f) => f.bucket === 'JavaScript');
    add(inStack.callers, caller === undefined ? '(no JavaScript caller)' : caller.name);
  };
  // (Its own process group, killed on Ctrl-C with the recordings; perf
  // script would catch a terminal's SIGINT itself and end early, as if
  // done.)
  const { child: script, closed } = perf(['script', '-i', data, '-F', 'comm,pid,ip,sym,dso']);
  // The load generator (and perf's own taskset) are not the server.
  const ignored = (comm) => comm === 'wrk' || comm === 'taskset' || comm === 'perf';
  let comm = null;
  let frames = [];
  const lines = readline.createInterface({ input: script.stdout, crlfDelay: Infinity });
  for await (const line of lines) {
    if (stack === null) {
      // "<comm> <pid> <ip> <sym> (<dso>)"; comm may hold spaces (thread names).
      const m = /^\s*(.*?)\s+(\d+)\s+[0-9a-f]+\s+(.*?)\s*\(([^()]*)\)\s*$/.exec(line);
      if (m === null || ignored(m[1])) continue;
      count([{ name: functionName(m[3], m[4]), bucket: bucketOf(m[4]) }]);
      continue;
    }
    // With -g: "<comm> <pid>", then a line per frame ("\t<ip> <sym> (<dso>)",
    // leaf first), then an empty line.
    if (line.trim() === '') {
      if (comm !== null && frames.length > 0 && !ignored(comm)) count(frames);
      comm = null;
      frames = [];
      continue;
    }
    if (/^\s/.test(line)) {
      const m = /^\s*[0-9a-f]+\s+(.*?)\s*\(([^()]*)\)\s*$/.exec(line);
      if (m !== null) frames.push({ name: functionName(m[1], m[2]), bucket: bucketOf(m[2]) });
      continue;
    }
    const m = /^\s*(.*?)\s+(\d+)\s*$/.exec(line);
    comm = m === null ? line.trim() : m[1];
  }
  if (comm !== null && frames.length > 0 && !ignored(comm)) count(frames);
  const { error, stderr, status } = await closed;
  if (interrupted) throw new Error('perf script: interrupted');
  if (error || status !== 0) throw new Error(`perf script failed: ${error ? error.message : stderr.slice(-1000)}`);
  return { buckets, functions, stack: inStack };
}

/** `v` with `digits` decimals; a figure that rounds to zero prints as 0.00, not -0.00. */
function fixed(v, digits) {
  return (Math.abs(v) < 0.5 / 10 ** digits ? 0 : v).toFixed(digits);
}

/** Microseconds per response of each key: (long - short) over their responses. */
function perResponse(a, b, key) {
  const d = b.responses - a.responses;
  const out = new Map();
  for (const k of new Set([...a[key].keys(), ...b[key].keys()])) {
    out.set(k, ((b[key].get(k) ?? 0) - (a[key].get(k) ?? 0)) * (PERIOD_NS / 1000) / d);
  }
  return out;
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      len: { type: 'string', default: '64' },
      short: { type: 'string', default: '4' },
      long: { type: 'string', default: '12' },
      top: { type: 'string', default: '25' },
      set: { type: 'string', multiple: true, default: [] },
      stack: { type: 'string' },
    },
  });
  const stack = values.stack ?? null;
  if (stack === '') throw new Error('--stack: a function name (or part of one) expected');
  // No function's name has an `=`; a case has: `--stack` given no value
  // took the case after it as its value.
  if (stack !== null && stack.includes('=')) {
    throw new Error(`--stack ${stack}: a function name (or part of one) expected, not a case (--stack takes the argument after it)`);
  }
  const short = Number(values.short);
  const long = Number(values.long);
  const top = Number(values.top);
  if (!(short >= MIN_SHORT_S && long > short)) {
    throw new Error(`--short ${values.short} --long ${values.long}: seconds, ${MIN_SHORT_S} <= short < long`);
  }
  if (!(values.top !== '' && Number.isInteger(top) && top >= 0)) throw new Error(`--top ${values.top}: a whole number expected`);
  if (positionals.length === 0) throw new Error('no case: give file=method[,key=value...], e.g. stream=fastWrite,tick=one');
  for (const s of values.set) {
    if (!/^[^=,]+=[^,]*$/.test(s)) throw new Error(`--set ${s}: key=value expected`);
  }
  const cases = positionals.map((spec) => {
    const [first, ...own] = spec.split(',');
    const [file, method] = first.split('=');
    if (!file || !method || own.some((s) => !/^[^=]+=/.test(s))) {
      throw new Error(`${spec}: use file=method[,key=value...], e.g. stream=fastWrite,tick=one`);
    }
    return { spec, file, method, configs: [`len=${values.len}`, ...values.set, ...own] };
  });
  if (cpus() === null) console.error('note: server and wrk are not pinned to different CPUs: figures are unreliable');
  // Ctrl-C (or a SIGTERM): the run under perf is killed, it fails, and
  // the finally below removes the scratch folder (and sample() the maps).
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      interrupted = true;
      process.exitCode = 130;
      for (const child of recording) killGroup(child);
    });
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-response-profile-'));
  const results = [];
  try {
    for (const c of cases) {
      const a = await sample(c.file, c.method, short, c.configs, dir, stack);
      const b = await sample(c.file, c.method, long, c.configs, dir, stack);
      if (b.responses <= a.responses) throw new Error(`${c.spec}: the long run served no more responses than the short one`);
      // As instructions.js: a short run still warming up (or a long one
      // slowed) leaves a difference of too few responses to divide by.
      if ((b.responses - a.responses) / (long - short) < b.responses / long / 4) {
        console.error(`warning: ${c.spec}: the long run's last ${long - short} s served under a quarter of its ` +
                      'mean rate: figures unreliable (a longer --short, or rerun)');
      }
      results.push({
        ...c,
        rate: (b.responses - a.responses) / (long - short),
        buckets: perResponse(a, b, 'buckets'),
        functions: perResponse(a, b, 'functions'),
        stack: stack === null ? null : Object.fromEntries(['total', 'beneath', 'callers'].map((k) =>
          [k, perResponse({ responses: a.responses, ...a.stack }, { responses: b.responses, ...b.stack }, k)])),
      });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`node ${process.version}, body ${values.len} bytes, runs of ${short} s and ${long} s, ` +
              `perf cpu-clock every ${PERIOD_NS / 1000} µs; server CPU µs per response`);
  const width = Math.max(12, ...results.map((r) => r.spec.length));
  const cell = (v) => (typeof v === 'number' ? fixed(v, 2) : v).padStart(width);
  console.log(`${''.padEnd(16)}${results.map((r) => cell(r.spec)).join('  ')}`);
  for (const b of BUCKETS) console.log(`${b.padEnd(16)}${results.map((r) => cell(r.buckets.get(b))).join('  ')}`);
  const total = (r) => [...r.buckets.values()].reduce((s, v) => s + v, 0);
  console.log(`${'total'.padEnd(16)}${results.map((r) => cell(total(r))).join('  ')}`);
  console.log(`${'responses/s'.padEnd(16)}${results.map((r) => cell(String(Math.round(r.rate)))).join('  ')}`);
  if (stack !== null) printStack(results, stack, Math.max(top, 10));
  if (top === 0) return;
  const [first, ...rest] = results;
  if (rest.length === 0) {
    console.log(`\nthe ${top} functions with the most µs/response`);
    const byTime = [...first.functions].sort((x, y) => y[1] - x[1]);
    for (const [n, v] of byTime.slice(0, top)) console.log(`${fixed(v, 3).padStart(8)}  ${n.slice(0, 110)}`);
    return;
  }
  for (const r of rest) {
    console.log(`\n${r.spec} against ${first.spec}: the ${top} functions whose µs/response differ most`);
    console.log(`${'second-first'.padStart(12)} ${'first'.padStart(8)} ${'second'.padStart(8)}  function`);
    const names = new Set([...first.functions.keys(), ...r.functions.keys()]);
    const diffs = [...names].map((n) => [n, (r.functions.get(n) ?? 0) - (first.functions.get(n) ?? 0)]);
    diffs.sort((x, y) => Math.abs(y[1]) - Math.abs(x[1]));
    for (const [n, d] of diffs.slice(0, top)) {
      const fmt = (v) => fixed(v, 3).padStart(8);
      console.log(`${fixed(d, 3).padStart(12)} ${fmt(first.functions.get(n) ?? 0)} ${fmt(r.functions.get(n) ?? 0)}  ${n.slice(0, 110)}`);
    }
  }
}

/**
 * --stack: each case's time per response in samples with a frame of
 * `stack`, the leaves beneath it and its first JavaScript callers.
 */
function printStack(results, stack, top) {
  for (const r of results) {
    console.log(`\n${r.spec}: samples with a frame of a function named *${stack}*: ` +
                `${fixed(r.stack.total.get('total') ?? 0, 3)} µs/response`);
    for (const [key, heading] of [['beneath', 'beneath it (the function running)'],
      ['callers', 'its first JavaScript caller']]) {
      console.log(`  ${heading}:`);
      const byTime = [...r.stack[key]].filter(([, v]) => v >= 0.0005).sort((x, y) => y[1] - x[1]);
      for (const [n, v] of byTime.slice(0, top)) console.log(`${fixed(v, 3).padStart(10)}  ${n.slice(0, 110)}`);
    }
  }
}

main().catch((error) => {
  console.error(`profile.js: ${interrupted ? 'interrupted' : error.message}`);
  process.exitCode = interrupted ? 130 : 1;
});
