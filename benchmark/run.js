'use strict';

// `npm run bench`: the quick comparison of issue 2. http/end-string.js,
// res.end(body) against res.fastEnd(body) at len 64 and 16384, runs
// interleaved (end, fastEnd, end, fastEnd, ...), server and wrk pinned to
// different CPUs; prints per len the median ratio fastEnd/end with min-max
// over runs, Welch's p-value with stars, and server CPU µs per response.
// About 2.5 minutes with the defaults (6 runs × 2 lens × 2 methods × 6 s).
//
//   npm run bench [-- --runs 10] [-- --node 26] [-- --set duration=3]
//
// The full matrix is compare.js's job; see benchmark/README.md.

const path = require('node:path');
const { parseArgs } = require('node:util');
const { compare, resolveBinary } = require('./compare');
const common = require('./common');
const stats = require('./_stats');

const DEFAULT_RUNS = 6;

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      runs: { type: 'string', default: String(DEFAULT_RUNS) },
      node: { type: 'string', default: process.execPath },
      set: { type: 'string', multiple: true, default: [] },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs ${values.runs}: a positive integer is expected`);
  const { binary, version } = resolveBinary(values.node);
  const set = [...values.set, ...positionals];
  if (!set.some((s) => s.startsWith('len='))) set.push('len=64', 'len=16384');

  process.on('exit', () => common.killChildren());
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
  if (common.pinning() === null) {
    console.error('note: server and load generator are not pinned to different CPUs: numbers are unreliable');
  }
  console.error(`npm run bench: http/end-string.js, res.end against res.fastEnd, ${set.join(' ')}, ` +
                `${runs} runs each, Node ${version} (${binary})`);
  const started = Date.now();
  const rows = await compare({
    sides: [{ label: 'node', binary, pkg: path.join(__dirname, '..') }],
    files: ['http/end-string.js'],
    runs,
    set,
  });

  const list = stats.comparisons(rows);
  const header = ['', 'res.end res/s', 'fastEnd res/s', 'median ratio (min-max)', 'improvement',
                  'p-value', 'conf', 'cpu µs/res end->fastEnd'];
  const body = list.map((c) => [
    c.configuration,
    stats.fmtRate(c.meanOld),
    stats.fmtRate(c.meanNew),
    `${stats.fmt(c.ratio.median, 3)} (${stats.fmt(c.ratio.min, 3)}-${stats.fmt(c.ratio.max, 3)})`,
    `${stats.fmt(c.improvement, 2)} %`,
    stats.fmtP(c.p),
    c.stars,
    `${stats.fmt(c.cpuOld, 2)}->${stats.fmt(c.cpuNew, 2)}`,
  ]);
  console.log(`\nres.fastEnd against res.end, Node ${version}, ${runs} runs each, ` +
              `${Math.round((Date.now() - started) / 1000)} s (stars: * p<0.05, ** p<0.01, *** p<0.001)\n`);
  console.log(stats.alignTable(header, body));
}

main().catch((err) => {
  console.error(`npm run bench: ${err.message}`);
  process.exit(1);
});
