'use strict';

// Node's benchmark/compare.js for fast-response.
//
//   node benchmark/compare.js [options] <category>...   (category: http)
//
//   --old <node> --new <node>   two Node binaries (a path, or a major version
//                               installed by scripts/node-versions.js: 26)
//   --old-ref <ref> --new-ref <ref>
//                               two git refs of this package, each built in a
//                               temporary folder (git archive, dependencies
//                               from npm's offline cache or this clone's
//                               node_modules, node-gyp rebuild); the ref
//                               `worktree` is this folder as it is
//   --runs <n>                  runs of each configuration (default 5)
//   --filter <s>, --exclude <s> benchmark files whose name has / lacks <s>
//   --set <key>=<value>         config value for every file (repeatable)
//   --keep-builds               leave the temporary builds in place
//
// Without --old/--new/--old-ref/--new-ref one binary and the package as it
// is are measured, and the comparison is by `method`: each fast method
// against its Node baseline `method=end` (BENCHMARKING.md's table). With
// them, the rows are labelled old and new, compared as Node's compare.R
// does, and the methods are still compared within each side.
//
// Runs are interleaved: for each file, for each run, for each
// configuration, old then new (A B A B ...), each run in a fresh process.
// stdout: CSV rows ("binary","filename","configuration","rate","time",
// "cpu_us"); stderr: progress, then the statistics table (stats.js prints
// the same table from a saved CSV).

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const common = require('./common');
const stats = require('./_stats');

const root = path.join(__dirname, '..');
const DEFAULT_RUNS = 5;

// ---------------------------------------------------------------------------
// What to run

/** Benchmark files of `categories` (folders of benchmark/), after --filter/--exclude. */
function benchmarkFiles(categories, filters = [], excludes = []) {
  const files = [];
  for (const category of categories) {
    const dir = path.join(__dirname, category);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
      throw new Error(`no benchmark category "${category}" (a folder of ${__dirname})`);
    }
    for (const name of fs.readdirSync(dir).sort()) {
      if (!name.endsWith('.js') || name.startsWith('_')) continue;
      const file = `${category}/${name}`;
      if (filters.length > 0 && !filters.some((f) => file.includes(f))) continue;
      if (excludes.some((e) => file.includes(e))) continue;
      files.push(file);
    }
  }
  return files;
}

/** A Node binary: a path, a command on PATH, or a major installed under .cache. */
function resolveBinary(spec) {
  let binary = spec;
  if (/^\d+$/.test(spec)) {
    binary = require('../scripts/node-versions').nodeBinary(spec);
    if (!fs.existsSync(binary)) {
      // (FAST_RESPONSE_CACHE moves the cache, as scripts/node-versions.js
      // reads it.)
      throw new Error(`Node ${spec} is not installed at ${binary}: node scripts/node-versions.js ${spec} ` +
                      '(set FAST_RESPONSE_CACHE to the cache it was installed into, if elsewhere)');
    }
  }
  const r = spawnSync(binary, ['-v'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`cannot run Node binary ${binary}`);
  return { binary, version: r.stdout.trim() };
}

/** The configurations of `file` with `set` applied, each as key=value args. */
function listConfigs(binary, file, set) {
  const r = spawnSync(binary, [path.join(__dirname, file), '--list', ...set.flatMap((s) => ['--set', s])],
                      { encoding: 'utf8', env: { ...process.env, FAST_RESPONSE_BENCH_CHILD: '' } });
  if (r.status !== 0) throw new Error(`${file} --list failed:\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

// ---------------------------------------------------------------------------
// Builds of git refs

/** Runs a build step; its output goes to stderr (stdout is for CSV) only when it fails. */
function run(cmd, args, options) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...options });
  const ok = r.status === 0 && !r.error;
  if (!ok) process.stderr.write(`${cmd} ${args.join(' ')}:\n${r.stdout || ''}${r.stderr || ''}${r.error || ''}\n`);
  return ok;
}

function git(args) {
  const r = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/**
 * Builds the package at git `ref` in a folder under `tmp()` and returns it. The
 * ref `worktree` is this folder, as it is. Dependencies: `npm ci
 * --offline` from npm's cache, else a link to this clone's node_modules;
 * then `node-gyp rebuild` in npm's environment (its nodedir: no download).
 */
function buildRef(ref, tmp, built) {
  if (ref === 'worktree') return root;
  const sha = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  if (built.has(sha)) return built.get(sha);
  const dir = path.join(tmp(), sha.slice(0, 12));
  fs.mkdirSync(dir, { recursive: true });
  console.error(`building fast-response at ${ref} (${sha.slice(0, 12)}) in ${dir}`);
  if (!run('sh', ['-c', 'git archive --format=tar "$0" | tar -x -C "$1"', sha, dir], { cwd: root })) {
    throw new Error(`git archive ${ref} failed`);
  }
  const npmCi = spawnSync('npm', ['ci', '--offline', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'],
                          { cwd: dir, stdio: 'ignore' });
  if (npmCi.status !== 0) {
    console.error(`npm ci --offline: not all dependencies in npm's cache; using ${path.join(root, 'node_modules')} for ${ref}'s dependencies`);
    fs.rmSync(path.join(dir, 'node_modules'), { recursive: true, force: true });
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  }
  if (!run('npm', ['exec', '--offline', '-c', 'node-gyp rebuild'], { cwd: dir })) {
    throw new Error(`node-gyp rebuild of ${ref} failed`);
  }
  const check = spawnSync(process.execPath, ['-e',
    'const fr = require(process.argv[1]); if (fr.native === false) { console.error(String(fr.loadError)); process.exit(1); }',
    dir], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`the build of ${ref} does not load: ${check.stderr}`);
  built.set(sha, dir);
  return dir;
}

// ---------------------------------------------------------------------------
// Running

function clock(ms) {
  const s = Math.floor(ms / 1000);
  const pad = (n) => String(n).padStart(2, '0');
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}

/**
 * Runs every file × run × configuration × side, interleaved, and returns the
 * rows. `sides`: [{ label, binary, pkg }]. Calls onRow(row) for each result
 * and logs progress to stderr. Throws on the first failed run.
 */
async function compare({ sides, files, runs, set = [], onRow = () => {} }) {
  const plan = files.map((file) => {
    const configs = listConfigs(sides[0].binary, file, set);
    // --set keys the file does not declare go to the harness (benchmarker=,
    // warmup=) as they are.
    const declared = new Set(configs.length ? configs[0].map((a) => a.split('=')[0]) : []);
    const extra = set.filter((s) => !declared.has(s.split('=')[0]));
    return { file, configs, extra };
  });
  const total = plan.reduce((n, p) => n + p.configs.length, 0) * runs * sides.length;
  const started = Date.now();
  const skipped = new Set();
  const rows = [];
  let done = 0;
  for (const [i, { file, configs, extra }] of plan.entries()) {
    for (let j = 0; j < runs; j++) {
      for (const [k, config] of configs.entries()) {
        for (const side of sides) {
          const key = `${side.label} ${file} ${config.join(' ')}`;
          const progress = () =>
            `[${clock(Date.now() - started)} | ${Math.floor(done / total * 100)}% done | ` +
            `file ${i + 1}/${plan.length} | run ${j + 1}/${runs} | config ${k + 1}/${configs.length}]`;
          if (skipped.has(key)) {
            done++;
            continue;
          }
          const configObject = Object.fromEntries(config.map((a) => a.split('=')));
          const message = await common.runChild({
            binary: side.binary,
            file: path.join(__dirname, file),
            args: [...config, ...extra],
            env: { FAST_RESPONSE_PATH: side.pkg },
          }, common.childTimeoutMs(configObject, Object.fromEntries(extra.map((a) => a.split('=')))));
          done++;
          if (message.type === 'skip') {
            skipped.add(key);
            console.error(`${progress()} ${side.label} ${file} ${config.join(' ')}: skipped, ${message.reason}`);
            continue;
          }
          const row = {
            binary: side.label,
            filename: message.filename,
            configuration: message.configuration,
            rate: message.rate,
            time: message.time,
            cpu: message.cpu,
          };
          rows.push(row);
          onRow(row, message);
          // Responses ended and chunks written by the addon, of all it counted.
          const ours = message.fast + (message.partial || 0) + (message.writes || 0);
          const fast = message.fast !== undefined ? `, fast path ${ours}/${ours + message.fallback}` +
            (message.nodePath ? ` (${message.nodePath})` : '') +
            (message.uncorks ? `, uncork() framed ${message.uncorks.framed}, joined ${message.uncorks.joined}` : '') : '';
          console.error(`${progress()} ${side.label} ${message.configuration}: ` +
                        `${stats.fmtRate(message.rate)} res/s, ${stats.fmt(message.cpu, 2)} µs cpu/res, ` +
                        `server busy ${stats.fmt(message.busy * 100, 0)} %${fast}`);
        }
      }
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------
// Command line

function parseCommandLine(argv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      old: { type: 'string' },
      new: { type: 'string' },
      'old-ref': { type: 'string' },
      'new-ref': { type: 'string' },
      runs: { type: 'string', default: String(DEFAULT_RUNS) },
      filter: { type: 'string', multiple: true, default: [] },
      exclude: { type: 'string', multiple: true, default: [] },
      set: { type: 'string', multiple: true, default: [] },
      'keep-builds': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs ${values.runs}: a positive integer is expected`);
  for (const s of values.set) {
    if (!/^[^=]+=/.test(s)) throw new Error(`--set ${s}: key=value expected`);
  }
  return { ...values, runs, categories: positionals };
}

function usage() {
  const text = fs.readFileSync(__filename, 'utf8').split('\n');
  const start = text.findIndex((l) => l.startsWith('// Node'));
  const end = text.findIndex((l, i) => i > start && !l.startsWith('//'));
  return text.slice(start, end).map((l) => l.replace(/^\/\/ ?/, '')).join('\n');
}

async function main(argv) {
  const opts = parseCommandLine(argv);
  if (opts.help || opts.categories.length === 0) {
    console.error(usage());
    process.exitCode = opts.help ? 0 : 2;
    return;
  }
  const files = benchmarkFiles(opts.categories, opts.filter, opts.exclude);
  if (files.length === 0) throw new Error('no benchmark file matches');

  let tmpDir = null;
  const tmp = () => (tmpDir = tmpDir || fs.mkdtempSync(path.join(os.tmpdir(), 'fast-response-compare-')));
  const cleanup = () => {
    if (tmpDir === null) return;
    if (opts['keep-builds']) console.error(`builds kept in ${tmpDir}`);
    else fs.rmSync(tmpDir, { recursive: true, force: true });
  };
  process.on('exit', () => {
    common.killChildren();
    cleanup();
  });
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping`);
      process.exit(130);
    });
  }

  const twoSides = ['old', 'new', 'old-ref', 'new-ref'].some((k) => opts[k] !== undefined);
  const built = new Map();
  const sides = (twoSides ? ['old', 'new'] : ['node']).map((label) => {
    const { binary, version } = resolveBinary(twoSides ? opts[label] || process.execPath : process.execPath);
    const ref = (twoSides && opts[`${label}-ref`]) || 'worktree';
    const pkg = buildRef(ref, tmp, built);
    console.error(`${label}: ${binary} ${version}, fast-response ${ref === 'worktree' ? 'as it is in' : `at ${ref} built in`} ${pkg}`);
    return { label, binary, version, ref, pkg };
  });
  if (sides.length === 2 && sides[0].binary === sides[1].binary && sides[0].pkg === sides[1].pkg) {
    console.error('note: old and new are the same binary and package: an A/A run, which shows the noise');
  }
  if (common.pinning() === null) {
    console.error('note: server and load generator are not pinned to different CPUs: numbers are unreliable');
  }

  console.log(stats.CSV_HEADER);
  const rows = await compare({
    sides,
    files,
    runs: opts.runs,
    set: opts.set,
    onRow: (row) => console.log(stats.csvRow(row)),
  });
  console.error(`\n${stats.formatTable(stats.comparisons(rows))}`);
}

module.exports = { compare, benchmarkFiles, resolveBinary, buildRef, listConfigs };

if (require.main === module) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(`compare.js: ${err.message}`);
    process.exit(1);
  });
}
