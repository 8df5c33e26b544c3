'use strict';

// The statistics of Node's benchmark/compare.R, in JavaScript: Welch's
// two-sample t-test (R's `t.test(rate ~ binary)`, var.equal = FALSE), its
// p-value from the Student t distribution, the confidence stars, and the
// "accuracy" columns (half-width of the confidence interval of the
// difference, relative to the old mean). Also the CSV reading and the table
// that compare.js, stats.js, run.js and results.js print.

// ---------------------------------------------------------------------------
// Special functions

// ln Γ(x) for x > 0: Lanczos approximation (g = 7, n = 9), relative error
// below 1e-15, with the reflection formula for x < 0.5.
const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028,
  771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

function logGamma(x) {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0];
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i] / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

// Continued fraction of the incomplete beta function (modified Lentz),
// as in Numerical Recipes' betacf().
function betaContinuedFraction(x, a, b) {
  const TINY = 1e-300;
  const EPS = 1e-16;
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - qab * x / qap;
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 10000; m++) {
    const m2 = 2 * m;
    let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < EPS) break;
  }
  return h;
}

/**
 * The regularized incomplete beta function I_x(a, b), 0 <= x <= 1, a, b > 0.
 */
function incompleteBeta(x, a, b) {
  if (!(a > 0) || !(b > 0) || !(x >= 0) || !(x <= 1)) return NaN;
  if (x === 0) return 0;
  if (x === 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) +
                         a * Math.log(x) + b * Math.log1p(-x));
  // The continued fraction converges fast for x < (a + 1) / (a + b + 2);
  // otherwise use I_x(a, b) = 1 - I_(1-x)(b, a).
  if (x < (a + 1) / (a + b + 2)) return front * betaContinuedFraction(x, a, b) / a;
  return 1 - front * betaContinuedFraction(1 - x, b, a) / b;
}

/** P(|T| >= |t|) for Student's t with `df` degrees of freedom (df > 0, real). */
function studentTwoSided(t, df) {
  if (Number.isNaN(t) || !(df > 0)) return NaN;
  if (!Number.isFinite(t)) return 0;
  return incompleteBeta(df / (df + t * t), df / 2, 0.5);
}

/** The cumulative distribution function P(T <= t) of Student's t. */
function studentCdf(t, df) {
  const tail = studentTwoSided(t, df) / 2;
  return t >= 0 ? 1 - tail : tail;
}

/**
 * The quantile q with P(T <= q) = p of Student's t (R's `qt(p, df)`), found
 * by bisection on the CDF: accurate to ~1e-12, plenty for a table.
 */
function studentQuantile(p, df) {
  if (!(p > 0 && p < 1) || !(df > 0)) return NaN;
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentQuantile(1 - p, df);
  let lo = 0;
  let hi = 1;
  while (studentCdf(hi, df) < p) {
    hi *= 2;
    if (hi > 1e12) return Infinity;
  }
  for (let i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (studentCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

// ---------------------------------------------------------------------------
// Samples

function mean(xs) {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** Sample variance (n - 1 in the denominator), as R's var(). */
function variance(xs) {
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) * (x - m);
  return s / (xs.length - 1);
}

function median(xs) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * Welch's two-sample t-test of the difference of means `y - x`, as R's
 * `t.test(y, x)` (var.equal = FALSE). Returns { t, df, p, meanX, meanY,
 * stderr }; p is NaN when a side has fewer than two values or both are
 * constant (R stops with "data are essentially constant" there).
 */
function welchTTest(x, y) {
  const nx = x.length;
  const ny = y.length;
  const meanX = nx > 0 ? mean(x) : NaN;
  const meanY = ny > 0 ? mean(y) : NaN;
  if (nx < 2 || ny < 2) return { t: NaN, df: NaN, p: NaN, meanX, meanY, stderr: NaN };
  const vx = variance(x) / nx;
  const vy = variance(y) / ny;
  const stderr = Math.sqrt(vx + vy);
  if (!(stderr > 0)) return { t: NaN, df: NaN, p: NaN, meanX, meanY, stderr };
  const t = (meanY - meanX) / stderr;
  const df = (vx + vy) ** 2 / (vx * vx / (nx - 1) + vy * vy / (ny - 1));
  return { t, df, p: studentTwoSided(t, df), meanX, meanY, stderr };
}

/** Node's compare.R stars: '***' p < 0.001, '**' p < 0.01, '*' p < 0.05. */
function stars(p) {
  if (!(p >= 0)) return '';
  if (p < 0.001) return '***';
  if (p < 0.01) return '**';
  if (p < 0.05) return '*';
  return '';
}

/**
 * Everything a table row needs about old (x) against new (y): means,
 * improvement in % of the old mean, Welch's p-value and stars, accuracy
 * (± % of the old mean at the 95, 99 and 99.9 % levels, as compare.R's
 * (*), (**), (***) columns), and the per-run ratios y[i] / x[i] of runs
 * paired by their order (median, min, max).
 */
function compareSamples(x, y) {
  const test = welchTTest(x, y);
  const improvement = (test.meanY - test.meanX) / test.meanX * 100;
  const accuracy = [0.05, 0.01, 0.001].map((alpha) =>
    studentQuantile(1 - alpha / 2, test.df) * test.stderr / test.meanX * 100);
  const ratios = [];
  for (let i = 0; i < Math.min(x.length, y.length); i++) ratios.push(y[i] / x[i]);
  return {
    n: [x.length, y.length],
    meanOld: test.meanX,
    meanNew: test.meanY,
    improvement,
    t: test.t,
    df: test.df,
    p: test.p,
    stars: stars(test.p),
    accuracy,
    ratio: {
      median: median(ratios),
      min: ratios.length ? Math.min(...ratios) : NaN,
      max: ratios.length ? Math.max(...ratios) : NaN,
    },
  };
}

// ---------------------------------------------------------------------------
// CSV of compare.js: "binary","filename","configuration","rate","time","cpu_us"

const CSV_HEADER = '"binary","filename","configuration","rate","time","cpu_us"';

function csvQuote(s) {
  return `"${String(s).replace(/"/g, '""')}"`;
}

function csvRow({ binary, filename, configuration, rate, time, cpu }) {
  return [csvQuote(binary), csvQuote(filename), csvQuote(configuration),
          rate.toFixed(2), time.toFixed(3),
          cpu === undefined || Number.isNaN(cpu) ? 'NA' : cpu.toFixed(3)].join(',');
}

function splitCsvLine(line) {
  const out = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let s = '';
      i++;
      while (i < line.length) {
        if (line[i] === '"' && line[i + 1] === '"') {
          s += '"';
          i += 2;
        } else if (line[i] === '"') {
          i++;
          break;
        } else {
          s += line[i++];
        }
      }
      out.push(s);
      i++; // the comma
    } else {
      let j = line.indexOf(',', i);
      if (j === -1) j = line.length;
      out.push(line.slice(i, j));
      i = j + 1;
    }
  }
  return out;
}

/**
 * Rows of a compare.js CSV (Node's compare.js CSV too: cpu_us is optional).
 * Lines that are not rows (a repeated header, blank lines, '#' comments)
 * are skipped.
 */
function parseCsv(text) {
  const rows = [];
  let columns = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const cells = splitCsvLine(line);
    if (cells.includes('configuration') && cells.includes('rate')) {
      columns = cells;
      continue;
    }
    if (columns === null) throw new Error(`CSV without a header line: ${line}`);
    const get = (name) => cells[columns.indexOf(name)];
    const cpu = columns.includes('cpu_us') ? Number(get('cpu_us')) : NaN;
    rows.push({
      binary: columns.includes('binary') ? get('binary') : 'node',
      filename: get('filename'),
      configuration: get('configuration'),
      rate: Number(get('rate')),
      time: Number(get('time')),
      cpu,
    });
  }
  return rows;
}

// ---------------------------------------------------------------------------
// Comparisons

// The baseline methods, Node without fast-response, that every other method
// of a case file is compared against (BENCHMARKING.md's table): `end`, Node's
// own res.end() in the http/ cases of one handler; `plain`, a framework's
// app as it is, against `patched`, the same app under
// install({ patchEnd: true }) (http/express.js, fastify.js, koa.js, and
// benchmark/app.js). A case file has one of them.
const BASELINE_METHODS = Object.freeze(['end', 'plain']);

/** Whether `method` is a baseline: Node's own path, no fast-response loaded. */
function isBaseline(method) {
  return BASELINE_METHODS.includes(method);
}

/** "len=64 c=50 method=fastEnd" -> { method: 'fastEnd', rest: 'len=64 c=50' } */
function splitMethod(configuration) {
  const parts = configuration.split(' ').filter(Boolean);
  let method = null;
  const rest = [];
  for (const part of parts) {
    if (part.startsWith('method=')) method = part.slice('method='.length);
    else rest.push(part);
  }
  return { method, rest: rest.join(' ') };
}

function cpuOf(rows) {
  const xs = rows.map((r) => r.cpu).filter((c) => Number.isFinite(c));
  return xs.length ? mean(xs) : NaN;
}

function comparison(kind, key, fields, oldRows, newRows) {
  return {
    kind,
    key,
    ...fields,
    ...compareSamples(oldRows.map((r) => r.rate), newRows.map((r) => r.rate)),
    cpuOld: cpuOf(oldRows),
    cpuNew: cpuOf(newRows),
  };
}

function groupBy(rows, keyOf) {
  const groups = new Map();
  for (const row of rows) {
    const key = keyOf(row);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(row);
  }
  return groups;
}

/**
 * The comparisons a CSV holds:
 * - kind 'method': within one binary, each method against the baseline
 *   (`method=end` or `method=plain`, BASELINE_METHODS) of the same file and
 *   configuration (BENCHMARKING.md's table: fast / baseline);
 * - kind 'binary': when the CSV has the binaries 'old' and 'new' (compare.js
 *   --old/--new or --old-ref/--new-ref), new against old for each file and
 *   configuration, as Node's compare.R.
 * Rows of one side are paired with the other's by their order in the CSV
 * (compare.js interleaves them: run j of A, then run j of B).
 */
function comparisons(rows) {
  const out = [];
  const byBinary = groupBy(rows, (r) => r.binary);
  for (const [binary, binaryRows] of byBinary) {
    const byCase = groupBy(binaryRows, (r) => `${r.filename}\0${splitMethod(r.configuration).rest}`);
    for (const caseRows of byCase.values()) {
      const byMethod = groupBy(caseRows, (r) => splitMethod(r.configuration).method);
      const baseline = BASELINE_METHODS.find((m) => byMethod.has(m));
      if (baseline === undefined) continue;
      const base = byMethod.get(baseline);
      for (const [method, methodRows] of byMethod) {
        if (method === null || isBaseline(method)) continue;
        const { filename } = caseRows[0];
        const { rest } = splitMethod(caseRows[0].configuration);
        out.push(comparison('method', `${binary} ${filename} ${rest} ${method}/${baseline}`,
                            { binary, filename, configuration: rest, method, old: baseline, new: method },
                            base, methodRows));
      }
    }
  }
  if (byBinary.has('old') && byBinary.has('new')) {
    const byCase = groupBy(rows, (r) => `${r.filename}\0${r.configuration}`);
    for (const caseRows of byCase.values()) {
      const oldRows = caseRows.filter((r) => r.binary === 'old');
      const newRows = caseRows.filter((r) => r.binary === 'new');
      if (oldRows.length === 0 || newRows.length === 0) continue;
      const { filename, configuration } = caseRows[0];
      out.push(comparison('binary', `${filename} ${configuration}`,
                          { binary: 'new/old', filename, configuration, method: splitMethod(configuration).method, old: 'old', new: 'new' },
                          oldRows, newRows));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// The table

function fmt(x, digits) {
  return Number.isFinite(x) ? x.toFixed(digits) : 'NA';
}

function fmtP(p) {
  if (!Number.isFinite(p)) return 'NA';
  if (p < 1e-4) return p.toExponential(1);
  return p.toFixed(4);
}

function fmtRate(x) {
  return Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : 'NA';
}

function alignTable(header, body) {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), ...body.map(line)].join('\n');
}

/**
 * The statistics table, one line per comparison: both means, improvement,
 * stars, Welch p-value, median ratio new/old with min-max over paired runs,
 * compare.R's accuracy at the (*) level, server CPU µs per response.
 */
function formatTable(list) {
  if (list.length === 0) {
    return `no comparisons: the CSV needs a baseline method (${BASELINE_METHODS.map((m) => `method=${m}`).join(' or ')}) ` +
      'beside other methods, or binaries old and new\n';
  }
  const sections = [];
  for (const kind of ['method', 'binary']) {
    const items = list.filter((c) => c.kind === kind);
    if (items.length === 0) continue;
    const title = kind === 'method' ?
      'Methods against their Node baseline (method=end, or plain: the app without fast-response), per binary: ' +
      'rate = responses/s, ratio = fast/baseline' :
      'Binary new against old (compare.R): rate = responses/s, ratio = new/old';
    const header = ['', 'old rate', 'new rate', 'improvement', 'conf', 'p-value',
                    'ratio median (min-max)', 'accuracy (*)', 'cpu µs/res old->new', 'runs'];
    const body = items.map((c) => [
      c.key,
      fmtRate(c.meanOld),
      fmtRate(c.meanNew),
      `${fmt(c.improvement, 2)} %`,
      c.stars,
      fmtP(c.p),
      `${fmt(c.ratio.median, 3)} (${fmt(c.ratio.min, 3)}-${fmt(c.ratio.max, 3)})`,
      `±${fmt(c.accuracy[0], 2)} %`,
      `${fmt(c.cpuOld, 2)}->${fmt(c.cpuNew, 2)}`,
      `${c.n[0]}/${c.n[1]}`,
    ]);
    sections.push(`${title}\n\n${alignTable(header, body)}\n`);
  }
  const n = list.length;
  sections.push(
    'Be aware that when doing many comparisons the risk of a false-positive result increases.\n' +
    `In this case, there are ${n} comparisons, you can thus expect the following amount of false-positive results:\n` +
    `  ${(n * 0.05).toFixed(2)} false positives, when considering a   5% risk acceptance (*, **, ***),\n` +
    `  ${(n * 0.01).toFixed(2)} false positives, when considering a   1% risk acceptance (**, ***),\n` +
    `  ${(n * 0.001).toFixed(2)} false positives, when considering a 0.1% risk acceptance (***)\n`);
  return sections.join('\n');
}

module.exports = {
  logGamma,
  incompleteBeta,
  studentTwoSided,
  studentCdf,
  studentQuantile,
  mean,
  variance,
  median,
  welchTTest,
  stars,
  compareSamples,
  BASELINE_METHODS,
  isBaseline,
  CSV_HEADER,
  csvRow,
  parseCsv,
  splitMethod,
  comparisons,
  formatTable,
  fmt,
  fmtP,
  fmtRate,
  alignTable,
};
