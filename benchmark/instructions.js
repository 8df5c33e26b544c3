'use strict';

// User-space instructions per HTTP response on the server, counted by
// valgrind --tool=callgrind: the steady counterpart of the server's CPU
// µs/response, which drifts by ±5 % from run to run on a shared VM.
//
//   node benchmark/instructions.js [options] [file=method[,key=value...] ...]
//
//   file=method    a case of benchmark/http/ and its method, e.g.
//                  template=template, template=end, bound=bound,
//                  fastify=plain, fastify=patched,route=text; key=value
//                  after a comma set that case's other configs
//                  (default: end, send, template and bound at len=64)
//   --len <bytes>  body length (default 64)
//   --set <key>=<value>
//                  a config for every case (repeatable), e.g. route=json
//                  for the framework cases (express, fastify, koa); a key
//                  a case file does not declare is ignored by it
//   --short <s>, --long <s>
//                  the two run lengths (default 15 and 45 seconds); the
//                  short run must outlast the JIT's warm-up (a warning
//                  says when it did not)
//   --requests <a>,<b>
//                  the client cases (http/client-post.js): runs of exactly
//                  a and b requests instead of seconds, the client under
//                  callgrind (its canned-response server is not); the
//                  per-request figure is (instructions(b) - instructions(a))
//                  / (b - a), e.g. --requests 20000,60000
//
// Each case file runs as one benchmark child (common.js) under callgrind,
// loaded by wrk over 2 keep-alive connections (more time out under
// valgrind), once for `short` and once for `long` seconds, without the
// warm-up. (instructions(long) - instructions(short)) / (responses(long) -
// responses(short)) cancels start-up, the response probe and most of the
// JIT's warm-up; the kernel's part (writev(2), read(2), epoll) is not
// counted, and neither is the load generator, which runs outside valgrind.
// Node's own request side (HTTP parser, IncomingMessage, timers, 'finish')
// is in every count: the differences between methods are the response side.

const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { parseArgs } = require('node:util');

// Under valgrind the JIT warms up for about 10 s; a shorter first run
// leaves warm-up in the difference.
const MIN_SHORT_S = 15;

const DEFAULT_CASES = ['send=end', 'send=send', 'template=template', 'bound=bound'];

/**
 * One run: { instructions, responses } of `file` with `method` for
 * `seconds`, or (`requests` > 0) for exactly that many requests; `configs`:
 * more key=value arguments for the case file (a key given again replaces
 * the earlier value: one configuration per run).
 */
function count(file, method, len, seconds, configs = [], requests = 0) {
  const config = new Map(requests > 0 ? [] : [['len', String(len)]]);
  for (const kv of configs) config.set(kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1));
  const fixed = requests > 0 ? [['method', method], ['requests', String(requests)], ['warmup', '0']] :
    [['method', method], ['c', '2'], ['duration', String(seconds)], ['warmup', '0']];
  for (const [k, v] of fixed) config.set(k, v);
  const args = [
    '--tool=callgrind', '--callgrind-out-file=/dev/null',
    process.execPath, path.join(__dirname, 'http', `${file}.js`),
    ...[...config].map(([k, v]) => `${k}=${v}`),
  ];
  const r = spawnSync('valgrind', args, {
    encoding: 'utf8',
    // common.js's child mode: this one configuration, the CSV row on stdout.
    env: { ...process.env, FAST_RESPONSE_BENCH_CHILD: '1' },
    timeout: (requests > 0 ? 3600 : seconds + 120) * 1000,
  });
  if (r.error) throw new Error(`valgrind: ${r.error.message} (apt-get install valgrind)`);
  const collected = /Collected : (\d+)/.exec(r.stderr);
  const row = r.stdout.split('\n').find((line) => line.startsWith('"node"'));
  const skipped = /^skipped .*/m.exec(r.stderr);
  if (r.status === 0 && row === undefined && skipped !== null) throw new Error(skipped[0]);
  if (r.status !== 0 || collected === null || row === undefined) {
    throw new Error(`${file} method=${method} under valgrind failed:\n${r.stdout.slice(-1000)}${r.stderr.slice(-2000)}`);
  }
  const fields = row.split(',');
  const rate = Number(fields[fields.length - 3]);
  const time = Number(fields[fields.length - 2]);
  return { instructions: Number(collected[1]), responses: requests > 0 ? requests : Math.round(rate * time) };
}

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      len: { type: 'string', default: '64' },
      short: { type: 'string', default: '15' },
      long: { type: 'string', default: '45' },
      set: { type: 'string', multiple: true, default: [] },
      requests: { type: 'string' },
    },
  });
  for (const s of values.set) {
    if (!/^[^=,]+=[^,]*$/.test(s)) throw new Error(`--set ${s}: key=value expected`);
  }
  if (values.requests !== undefined) {
    const [a, b] = values.requests.split(',').map(Number);
    if (!(a > 0 && b > a)) throw new Error(`--requests ${values.requests}: use <a>,<b> with 0 < a < b`);
    countRequests(positionals, a, b, values.set);
    return;
  }
  const len = Number(values.len);
  const short = Number(values.short);
  const long = Number(values.long);
  const cases = positionals.length === 0 ? DEFAULT_CASES : positionals;
  console.log(`node ${process.version}, body ${len} bytes, runs of ${short} s and ${long} s under callgrind`);
  if (values.set.length > 0) console.log(`configs for every case: ${values.set.join(' ')}`);
  const width = Math.max(20, ...cases.map((spec) => spec.length));
  console.log(`${'case'.padEnd(width)}  ${'responses short/long'.padStart(22)}   instructions/response`);
  for (const spec of cases) {
    const [first, ...own] = spec.split(',');
    const [file, method] = first.split('=');
    if (!file || !method || own.some((s) => !/^[^=]+=/.test(s))) {
      throw new Error(`${spec}: use file=method[,key=value...], e.g. template=template or fastify=patched,route=text`);
    }
    // The case's own key=value after the --set ones: the later value wins.
    const configs = [...values.set, ...own];
    const a = count(file, method, len, short, configs);
    const b = count(file, method, len, long, configs);
    if (b.responses <= a.responses) throw new Error(`${spec}: the long run served no more responses than the short one`);
    const per = (b.instructions - a.instructions) / (b.responses - a.responses);
    // A short run still warming up (JIT, inline caches) inflates the figure.
    const shortRate = a.responses / short;
    const restRate = (b.responses - a.responses) / (long - short);
    if (short < MIN_SHORT_S || shortRate < restRate / 4) {
      console.error(`warning: ${spec}: the ${short} s run (${MIN_SHORT_S} s or more wanted) served ${Math.round(shortRate)} responses/s, ` +
                    `the rest of the ${long} s run ${Math.round(restRate)}/s: still warming up, ` +
                    'the figure is too high; use a longer --short');
    }
    console.log(`${spec.padEnd(width)}  ${`${a.responses}/${b.responses}`.padStart(22)}   ${Math.round(per).toString().padStart(10)}`);
  }
}

/** --requests a,b: instructions per request of the client cases. */
function countRequests(cases, a, b, set) {
  console.log(`node ${process.version}, runs of ${a} and ${b} requests under callgrind`);
  if (set.length > 0) console.log(`configs for every case: ${set.join(' ')}`);
  const width = Math.max(20, ...cases.map((spec) => spec.length));
  console.log(`${'case'.padEnd(width)}  instructions/request`);
  for (const spec of cases) {
    const [first, ...own] = spec.split(',');
    const [file, method] = first.split('=');
    if (!file || !method || own.some((s) => !/^[^=]+=/.test(s))) {
      throw new Error(`${spec}: use file=method[,key=value...], e.g. client-post=fastEnd`);
    }
    const configs = [...set, ...own];
    const x = count(file, method, 0, 0, configs, a);
    const y = count(file, method, 0, 0, configs, b);
    console.log(`${spec.padEnd(width)}  ${Math.round((y.instructions - x.instructions) / (b - a)).toString().padStart(20)}`);
  }
}

main();
