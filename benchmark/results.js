'use strict';

// Regenerates benchmark/RESULTS.md (and benchmark/results.svg) from a full
// run: every http/ case, Node 20 (`node`) against Node 26
// (.cache/node-26/bin/node), runs interleaved, as BENCHMARKING.md says.
//
//   node benchmark/results.js                 run, then write RESULTS.md
//       [--runs 5] [--old node] [--new 26] [--filter s] [--set key=value]
//   node benchmark/results.js --from benchmark/results.csv
//                                             write RESULTS.md from a saved run
//   --csv <file> (default benchmark/results.csv), --md <file> (default
//   benchmark/RESULTS.md; the SVG goes beside it as results.svg)
//   --readme   also rewrite README.md's results section from the run
//   --writer   run only the FastResponse writer's cases (WRITER_FILES:
//              pipelined, streamed, the frameworks, the client) into
//              benchmark/results-writer.csv; RESULTS.md shows that run
//              after the full one (each with its own command and date)
//
// A run writes benchmark/results.csv (compare.js's CSV) and
// benchmark/results.json (the command, Node versions, date, machine) beside
// it. With the defaults it takes about 100 minutes: 8 files × 5 lengths ×
// 2 methods, and the framework cases (express, fastify, koa: 2 routes at
// 64 bytes, method plain against patched), × 2 binaries × 5 runs × ~6.6 s.
// Run it on a quiet machine.

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { benchmarkFiles, listConfigs, resolveBinary } = require('./compare');
const common = require('./common');
const stats = require('./_stats');
const { svgChart } = require('./plot');

const root = path.join(__dirname, '..');
// The cases of the per-socket writer round (issues: pipelined bursts and
// streamed writes, framework figures, outgoing requests): a run of their
// own, `--writer`, saved beside the full one.
const WRITER_FILES = ['pipeline', 'stream', 'express', 'fastify', 'koa', 'client-post'];
const WRITER_CSV = path.join(__dirname, 'results-writer.csv');
const SECONDS_PER_RUN_OVERHEAD = 0.6;

// BENCHMARKING.md's targets: median ratio fast/baseline, by Node major.
const TARGETS = {
  20: { sendTemplate: 1.30, endSetheader: 1.10, body16k: 1.05, never: 0.98 },
  26: { sendTemplate: 1.20, endSetheader: 1.03, body16k: 1.02, never: 0.98 },
};
const WRITER_TARGETS = {
  20: { pipelined: 2.0, streamEach: 1.5, streamOne: 1.2, client: 1.10, never: 0.98 },
  26: { pipelined: 2.0, streamEach: 1.5, streamOne: 1.2, client: 1.0, never: 0.98 },
};

function rel(p) {
  const r = path.relative(root, p);
  return r.startsWith('..') ? p : r;
}

function machine() {
  const cpus = os.cpus();
  const wrk = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  const pin = common.pinning();
  return {
    cpu: cpus.length ? cpus[0].model : 'unknown',
    cpus: cpus.length,
    pinning: pin === null ? 'none' : `server on CPU ${pin.server}, load generator on CPU ${pin.client}`,
    wrk: ((wrk.stdout || '') + (wrk.stderr || '')).split('\n')[0].replace(/ Copyright.*/, '').trim() || 'not found',
    kernel: `${os.type()} ${os.release()}`,
  };
}

/** Runs compare.js with stdout to `csv`; resolves to the metadata. */
async function runFull(opts, csv) {
  const old = resolveBinary(opts.old);
  const neu = resolveBinary(opts.new);
  const args = [path.join(__dirname, 'compare.js'), '--old', old.binary, '--new', neu.binary, '--runs', String(opts.runs),
                ...opts.filter.flatMap((f) => ['--filter', f]), ...opts.set.flatMap((s) => ['--set', s]), 'http'];
  const files = benchmarkFiles(['http'], opts.filter, []);
  const configs = files.flatMap((f) => listConfigs(old.binary, f, opts.set));
  const perRun = configs.reduce((s, c) => {
    const d = Number((c.find((a) => a.startsWith('duration=')) || 'duration=5').split('=')[1]);
    return s + d + 1 + SECONDS_PER_RUN_OVERHEAD;
  }, 0);
  const estimate = perRun * opts.runs * 2;
  const command = ['node', ...args.map((a) => rel(a))].join(' ');
  console.error(`${command}\n${configs.length} configurations × ${opts.runs} runs × 2 binaries: ` +
                `about ${Math.round(estimate / 60)} minutes`);
  const meta = {
    command,
    date: new Date().toISOString(),
    old: { binary: rel(old.binary), version: old.version },
    new: { binary: rel(neu.binary), version: neu.version },
    runs: opts.runs,
    machine: machine(),
    loadavgStart: os.loadavg().map((l) => l.toFixed(2)).join(' '),
  };
  const out = fs.openSync(csv, 'w');
  const child = spawn(process.execPath, args, { stdio: ['ignore', out, 'inherit'] });
  const stop = () => child.kill('SIGTERM');
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(s ? 1 : c)));
  fs.closeSync(out);
  if (code !== 0) throw new Error(`compare.js failed (exit ${code}); the partial CSV is in ${rel(csv)}`);
  meta.finished = new Date().toISOString();
  meta.loadavgEnd = os.loadavg().map((l) => l.toFixed(2)).join(' ');
  return meta;
}

// ---------------------------------------------------------------------------
// RESULTS.md

function majorOf(version) {
  const m = /^v(\d+)\./.exec(version || '');
  return m === null ? null : Number(m[1]);
}

function caseName(c) {
  return c.filename.replace(/^http\//, '').replace(/\.js$/, '');
}

function lenOf(configuration) {
  const m = /(?:^| )len=(\d+)/.exec(configuration);
  return m === null ? NaN : Number(m[1]);
}

// A row's body length for a table cell, and its ` len=…` in a label: none
// for a case without one (client-post, the frameworks' routes).
function lenCell(configuration) {
  const len = lenOf(configuration);
  return Number.isNaN(len) ? '–' : String(len);
}

function lenLabel(configuration) {
  const len = lenOf(configuration);
  return Number.isNaN(len) ? '' : ` len=${len}`;
}

// What else tells a row apart (type=buffer, workers=4); the defaults say nothing.
function otherConfig(configuration) {
  return configuration.split(' ')
    .filter((p) => !/^(len|duration|c|method)=/.test(p) && p !== 'type=string').join(' ');
}

function caseLabel(c) {
  const name = caseName(c);
  const rest = otherConfig(c.configuration);
  return `${name}${c.method && c.method !== name ? ` ${c.method}` : ''}${rest ? ` ${rest}` : ''}`;
}

function mdTable(header, rows) {
  return [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`,
          ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function ratioText(c) {
  return `${stats.fmt(c.ratio.median, 3)} (${stats.fmt(c.ratio.min, 3)}–${stats.fmt(c.ratio.max, 3)})`;
}

function methodTable(list) {
  return mdTable(
    ['case', 'len', 'baseline res/s', 'fast res/s', 'median ratio (min–max)', 'improvement', 'p-value', 'conf',
     'CPU µs/res baseline → fast'],
    list.map((c) => [
      caseLabel(c),
      lenCell(c.configuration),
      stats.fmtRate(c.meanOld),
      stats.fmtRate(c.meanNew),
      ratioText(c),
      `${stats.fmt(c.improvement, 1)} %`,
      stats.fmtP(c.p),
      c.stars || '',
      `${stats.fmt(c.cpuOld, 2)} → ${stats.fmt(c.cpuNew, 2)}`,
    ]));
}

/** BENCHMARKING.md's targets against the method comparisons of one binary. */
function targetRows(all, major) {
  const t = TARGETS[major];
  if (t === undefined) return [];
  // benchmark/http/bound.js is not a case of the package: it is the bound.
  const list = all.filter((c) => caseName(c) !== 'bound');
  const at = (names, len) => list.filter((c) => names.includes(caseName(c)) && lenOf(c.configuration) === len);
  const check = (what, items, target) => {
    if (items.length === 0) return [what, `≥ ${target.toFixed(2)}`, 'not measured', ''];
    const worst = items.reduce((a, b) => (a.ratio.median <= b.ratio.median ? a : b));
    const ok = items.every((c) => c.ratio.median >= target);
    return [what, `≥ ${target.toFixed(2)}`,
            `${stats.fmt(worst.ratio.median, 3)} (lowest: ${caseName(worst)}${lenLabel(worst.configuration)})`,
            ok ? 'met' : '**not met**'];
  };
  return [
    check('send, template, 64 B', at(['send', 'template'], 64), t.sendTemplate),
    check('end-string, setheader, 64 B', at(['end-string', 'setheader'], 64), t.endSetheader),
    check('any case, 16 KiB', list.filter((c) => lenOf(c.configuration) === 16384), t.body16k),
    check('any case, any len (never slower)', list, t.never),
  ];
}

/**
 * BENCHMARKING.md's targets for the writer's cases, each beside its bound
 * (the case file's method=bound in the same configuration): where the
 * target is above the bound, the ratio to the bound is what to read.
 */
function writerTargetRows(all, major) {
  const t = WRITER_TARGETS[major];
  if (t === undefined) return [];
  const has = (c, kv) => c.configuration.split(' ').includes(kv);
  const boundOf = (c) => all.find((b) => b.filename === c.filename && b.method === 'bound' &&
                                        otherConfig(b.configuration) === otherConfig(c.configuration) &&
                                        Object.is(lenOf(b.configuration), lenOf(c.configuration)));
  const list = all.filter((c) => c.method !== 'bound');
  const check = (what, items, target) => {
    if (items.length === 0) return [what, `≥ ${target.toFixed(2)}`, 'not measured', '', ''];
    const worst = items.reduce((a, b) => (a.ratio.median <= b.ratio.median ? a : b));
    const bound = boundOf(worst);
    const ok = items.every((c) => c.ratio.median >= target);
    return [what, `≥ ${target.toFixed(2)}`, `${stats.fmt(worst.ratio.median, 3)} (lowest: ${caseLabel(worst)}` +
            `${lenLabel(worst.configuration)})`,
            bound === undefined ? '' : `${stats.fmt(bound.ratio.median, 3)} (${stats.fmt(worst.ratio.median /
              bound.ratio.median, 3)} of it)`,
            ok ? 'met' : (bound !== undefined && bound.ratio.median < target ? '**not met; above the bound**' :
              '**not met**')];
  };
  const file = (name) => list.filter((c) => caseName(c) === name);
  return [
    check('pipelined, depth 16', file('pipeline').filter((c) => has(c, 'depth=16')), t.pipelined),
    check('streamed, one write per tick', file('stream').filter((c) => has(c, 'tick=each')), t.streamEach),
    check('streamed, 8 writes in one tick', file('stream').filter((c) => has(c, 'tick=one')), t.streamOne),
    check('client POST, keep-alive agent', file('client-post'), t.client),
    check('any case, length, depth (never slower)', list, t.never),
  ];
}

function resultsMarkdown(rows, meta, csvPath, svgPath, extra = []) {
  const list = stats.comparisons(rows);
  const versions = { old: meta && meta.old.version, new: meta && meta.new.version, node: meta && meta.old.version };
  const out = ['# fast-response: benchmark results', ''];
  out.push('Generated by `benchmark/results.js` from the run below; do not edit by hand. ' +
           `Regenerate this file from the saved CSV with \`node benchmark/results.js --from ${rel(csvPath)}\`, ` +
           'or rerun everything with `node benchmark/results.js` (BENCHMARKING.md: a quiet machine).', '');
  if (meta) {
    out.push(`- Command: \`${meta.command}\``);
    out.push(`- Date: ${meta.date} to ${meta.finished || '?'} (UTC)`);
    out.push(`- old: \`${meta.old.binary}\`, \`node -v\` ${meta.old.version}; new: \`${meta.new.binary}\`, ` +
             `\`node -v\` ${meta.new.version}`);
    out.push(`- Machine: ${meta.machine.cpu}, ${meta.machine.cpus} CPUs, ${meta.machine.kernel}; ` +
             `${meta.machine.pinning}; ${meta.machine.wrk}`);
    out.push(`- Load average at start ${meta.loadavgStart}, at end ${meta.loadavgEnd || '?'}`);
  } else {
    out.push(`- From ${rel(csvPath)} (no metadata file beside it)`);
  }
  out.push('- Protocol: 50 keep-alive connections, each run a fresh server process, a 1 s warm-up discarded, ' +
           `then ${rows.length ? rows[0].time.toFixed(0) : '?'} s measured; baseline and fast runs interleaved; ` +
           'every response checked (status, headers, body bytes; no socket errors or non-2xx; the fast path ' +
           'taken for ≥ 99 % of responses).');
  out.push('- Columns: rates are mean responses/s; ratio = fast / baseline per pair of interleaved runs; ' +
           'p-value: Welch\'s t-test on the rates; conf: * p < 0.05, ** p < 0.01, *** p < 0.001; ' +
           'CPU µs/res: server CPU time (user + system) per response.', '');

  out.push(...runMarkdown(list, versions, targetRows, '##'));
  for (const run of extra) out.push(...extraRunMarkdown(run));
  if (svgPath) out.push(`![ratio fast/baseline by body length](${path.basename(svgPath)})`, '');
  return `${out.join('\n')}\n`;
}

/** A saved run of the writer's cases (`--writer`), after the full one. */
function extraRunMarkdown({ rows, meta, csvPath }) {
  const list = stats.comparisons(rows);
  const versions = { old: meta && meta.old.version, new: meta && meta.new.version, node: meta && meta.old.version };
  const out = ['## The FastResponse writer\'s cases: pipelined, streamed, frameworks, client', ''];
  out.push(meta ? `- Command: \`${meta.command}\` (\`node benchmark/results.js --writer\`)` : `- From ${rel(csvPath)}`);
  if (meta) {
    out.push(`- Date: ${meta.date} to ${meta.finished || '?'} (UTC); old \`node -v\` ${meta.old.version}, ` +
             `new ${meta.new.version}; load average at start ${meta.loadavgStart}, at end ${meta.loadavgEnd || '?'}`);
  }
  // What was measured again, and why (a rerun of some files, by hand).
  for (const line of (meta && meta.notes) || []) out.push(`- ${line}`);
  out.push('- Protocol and columns as above. The frameworks\' baseline is `plain` (the app without the ' +
           'package), client-post\'s rates are the client\'s requests/s and its CPU µs per request; ' +
           '`bound` rows are each file\'s bound (same bytes, nothing rendered or checked).', '');
  out.push(...runMarkdown(list, versions, writerTargetRows, '###'));
  return out;
}

/** The method tables (and targets) of one run, then its Node-against-Node table. */
function runMarkdown(list, versions, targetsOf, level) {
  const out = [];
  for (const binary of ['node', 'old', 'new']) {
    const items = list.filter((c) => c.kind === 'method' && c.binary === binary);
    if (items.length === 0) continue;
    const version = versions[binary] || binary;
    out.push(`${level} Node ${version}: fast-response against Node's own path`, '');
    out.push(methodTable(items), '');
    const targets = targetsOf(items, majorOf(version));
    if (targets.length > 0) {
      out.push(`Targets for Node ${majorOf(version)} (BENCHMARKING.md, median ratio):`, '');
      const header = targets[0].length === 5 ? ['target', 'wanted', 'measured', 'bound (ratio to it)', ''] :
        ['target', 'wanted', 'measured', ''];
      out.push(mdTable(header, targets), '');
    }
    const bound = items.filter((c) => caseName(c) === 'bound');
    if (bound.length > 0) {
      out.push(`The bound on Node ${majorOf(version)} (\`http/bound.js\`: the same bytes with the head ` +
               'already rendered and no checks, one writev(2), then Node\'s own end() bookkeeping; no ' +
               'replacement of end() can beat it here): median ratio bound/end ' +
               bound.map((c) => `${stats.fmt(c.ratio.median, 3)} at ${lenOf(c.configuration)} B`).join(', ') +
               '.', '');
    }
  }
  const across = list.filter((c) => c.kind === 'binary');
  if (across.length > 0) {
    out.push(`${level} Node ${versions.new || 'new'} against Node ${versions.old || 'old'}, same code`, '');
    out.push(mdTable(
      ['case', 'len', 'method', `${versions.old || 'old'} res/s`, `${versions.new || 'new'} res/s`,
       'median ratio new/old (min–max)', 'p-value', 'conf', 'CPU µs/res old → new'],
      across.map((c) => [caseName(c), lenCell(c.configuration), c.method || '',
                         stats.fmtRate(c.meanOld), stats.fmtRate(c.meanNew), ratioText(c), stats.fmtP(c.p),
                         c.stars || '', `${stats.fmt(c.cpuOld, 2)} → ${stats.fmt(c.cpuNew, 2)}`])), '');
  }
  return out;
}

const CASE_ORDER = ['end-string', 'end-buffer', 'setheader', 'send', 'template', 'patched', 'express', 'fastify', 'koa',
                    'cluster', 'bound'];

/**
 * The README's results section (between `<!-- results:start -->` and
 * `<!-- results:end -->`): per case, the median ratio fast/baseline at each
 * body length, for each Node version of the run, and the CPU time per
 * response at 64 bytes. Every figure is from `rows`.
 */
function readmeResults(rows, meta) {
  const list = stats.comparisons(rows).filter((c) => c.kind === 'method');
  const binaries = ['old', 'new', 'node'].filter((b) => list.some((c) => c.binary === b));
  const versionOf = (b) => (meta ? (b === 'new' ? meta.new.version : meta.old.version) : b);
  const lens = [...new Set(list.map((c) => lenOf(c.configuration)))].sort((a, b) => a - b);
  const labels = [...new Set(list.map(caseLabel))]
    .sort((a, b) => CASE_ORDER.indexOf(a.split(' ')[0]) - CASE_ORDER.indexOf(b.split(' ')[0]) || a.localeCompare(b));
  const tables = binaries.map((b) => {
    const header = ['case', ...lens.map((len) => `${len} B`), 'CPU µs/res at 64 B'];
    const body = labels.map((label) => {
      const find = (len) => list.find((x) => x.binary === b && caseLabel(x) === label && lenOf(x.configuration) === len);
      const c64 = find(64);
      return [
        label === 'bound bound' ? '*bound* (no end() replacement can beat it)' : label,
        ...lens.map((len) => {
          const c = find(len);
          return c ? `${stats.fmt(c.ratio.median, 2)}${c.stars ? ` ${c.stars}` : ''}` : '';
        }),
        c64 ? `${stats.fmt(c64.cpuOld, 1)} → ${stats.fmt(c64.cpuNew, 1)}` : '',
      ];
    });
    return `**Node ${versionOf(b)}**, median ratio fast/baseline by body length:\n\n${mdTable(header, body)}`;
  });
  const when = meta ? meta.date.slice(0, 10) : 'an unknown date';
  const command = meta ? meta.command.replace(/ --old \S+ --new \S+/, ' --old node --new 26') : 'node benchmark/results.js';
  return [
    `From [\`benchmark/RESULTS.md\`](benchmark/RESULTS.md), produced on ${when} by \`node benchmark/results.js\` ` +
    `(that is \`${command}\`; ${binaries.map((b) => `Node ${versionOf(b)}`).join(' and ')}, ` +
    `${meta ? `${meta.machine.cpus}-CPU VM, ${meta.machine.pinning}, ` : ''}` +
    `50 keep-alive connections, ${meta ? meta.runs : '?'} interleaved runs of ` +
    `${rows.length ? rows[0].time.toFixed(0) : '?'} s after a 1 s warm-up). Each cell: median over the runs ` +
    'of the ratio fast/baseline (responses/s of the fast method over those of Node\'s own ' +
    '`writeHead()` + `end()` or `setHeader()` + `end()`, or for express, fastify and koa of the same app ' +
    'without fast-response (`patched`: under `install({ patchEnd: true })`), in the same run pair; ' +
    'above 1 is faster), with ' +
    'Welch\'s t-test stars (* p < 0.05, ** p < 0.01, *** p < 0.001); CPU: server CPU time per ' +
    'response, baseline → fast.',
    '',
    tables.join('\n\n'),
    '',
    '![ratio fast/baseline by body length](benchmark/results.svg)',
  ].join('\n');
}

/** Replaces the text between `<!-- name:start -->` and `<!-- name:end -->` in README.md. */
function replaceReadmeSection(name, text) {
  const readme = path.join(root, 'README.md');
  const doc = fs.readFileSync(readme, 'utf8');
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  if (a < 0 || b < a) throw new Error(`README.md has no ${name} markers`);
  fs.writeFileSync(readme, `${doc.slice(0, a + start.length)}\n${text}\n${doc.slice(b)}`);
}

function readRun(csv) {
  const metaPath = csv.replace(/\.csv$/i, '') + '.json';
  const meta = fs.existsSync(metaPath) ? JSON.parse(fs.readFileSync(metaPath, 'utf8')) : null;
  const rows = stats.parseCsv(fs.readFileSync(csv, 'utf8'));
  if (rows.length === 0) throw new Error(`${csv} has no rows`);
  return { rows, meta, csvPath: csv };
}

/** RESULTS.md from the full run `csv` and, when saved, the writer's run. */
function writeResults(csv, md, readme) {
  const { rows, meta } = readRun(csv);
  const extra = csv !== WRITER_CSV && fs.existsSync(WRITER_CSV) ? [readRun(WRITER_CSV)] : [];
  const svg = path.join(path.dirname(md), 'results.svg');
  const labels = meta ? { old: `Node ${meta.old.version}`, new: `Node ${meta.new.version}`, node: `Node ${meta.old.version}` } : {};
  fs.writeFileSync(svg, svgChart(rows, { labels }));
  fs.writeFileSync(md, resultsMarkdown(rows, meta, csv, svg, extra));
  console.error(`wrote ${rel(md)} and ${rel(svg)} from ${rel(csv)}`);
  if (readme) {
    replaceReadmeSection('results', readmeResults(rows, meta));
    console.error('wrote the results section of README.md');
  }
}

async function main() {
  const { values } = parseArgs({
    options: {
      from: { type: 'string' },
      csv: { type: 'string', default: path.join(__dirname, 'results.csv') },
      md: { type: 'string', default: path.join(__dirname, 'RESULTS.md') },
      runs: { type: 'string', default: '5' },
      old: { type: 'string', default: process.execPath },
      new: { type: 'string', default: '26' },
      filter: { type: 'string', multiple: true, default: [] },
      set: { type: 'string', multiple: true, default: [] },
      readme: { type: 'boolean', default: false },
      writer: { type: 'boolean', default: false },
    },
  });
  if (values.from !== undefined) {
    writeResults(path.resolve(values.from), path.resolve(values.md), values.readme);
    return;
  }
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs ${values.runs}: a positive integer is expected`);
  if (values.writer) {
    const meta = await runFull({ ...values, runs, filter: values.filter.length ? values.filter : WRITER_FILES },
                               WRITER_CSV);
    fs.writeFileSync(WRITER_CSV.replace(/\.csv$/i, '') + '.json', `${JSON.stringify(meta, null, 2)}\n`);
    writeResults(path.resolve(values.csv), path.resolve(values.md), false);
    return;
  }
  const csv = path.resolve(values.csv);
  const meta = await runFull({ ...values, runs }, csv);
  fs.writeFileSync(csv.replace(/\.csv$/i, '') + '.json', `${JSON.stringify(meta, null, 2)}\n`);
  writeResults(csv, path.resolve(values.md), values.readme);
}

module.exports = { resultsMarkdown, targetRows, writerTargetRows, readmeResults };

if (require.main === module) {
  main().catch((err) => {
    console.error(`results.js: ${err.message}`);
    process.exit(1);
  });
}
