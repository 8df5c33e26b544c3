'use strict';

// The statistics of the benchmark harness (benchmark/_stats.js) against
// values known independently: closed forms of Student's t distribution,
// textbook incomplete beta values, and R's own output for Welch's t-test.

const assert = require('node:assert/strict');
const test = require('node:test');
const s = require('../benchmark/_stats');

function close(actual, expected, tolerance, what) {
  assert.ok(Math.abs(actual - expected) <= tolerance,
            `${what}: ${actual} is not within ${tolerance} of ${expected}`);
}

test('logGamma matches Γ(n) = (n-1)! and Γ(1/2) = √π', () => {
  close(s.logGamma(1), 0, 1e-14, 'lnΓ(1)');
  close(s.logGamma(5), Math.log(24), 1e-13, 'lnΓ(5)');
  close(s.logGamma(0.5), Math.log(Math.sqrt(Math.PI)), 1e-13, 'lnΓ(1/2)');
  close(s.logGamma(20), Math.log(121645100408832000), 1e-11, 'lnΓ(20)');
});

test('incompleteBeta matches closed forms', () => {
  // I_x(a, 1) = x^a; I_x(1, b) = 1 - (1 - x)^b; I_{1/2}(a, a) = 1/2.
  close(s.incompleteBeta(0.3, 2.5, 1), 0.3 ** 2.5, 1e-13, 'I_0.3(2.5, 1)');
  close(s.incompleteBeta(0.3, 1, 4), 1 - 0.7 ** 4, 1e-13, 'I_0.3(1, 4)');
  close(s.incompleteBeta(0.5, 7.3, 7.3), 0.5, 1e-13, 'I_0.5(7.3, 7.3)');
  // I_0.3(2, 3) = Σ_{j=2..4} C(4, j) 0.3^j 0.7^(4-j) = 0.2646 + 0.0756 + 0.0081.
  close(s.incompleteBeta(0.3, 2, 3), 0.3483, 1e-13, 'I_0.3(2, 3)');
  // Both branches of the continued fraction (x below and above (a+1)/(a+b+2)).
  close(s.incompleteBeta(0.9, 2, 3) + s.incompleteBeta(0.1, 3, 2), 1, 1e-13, 'symmetry');
  assert.equal(s.incompleteBeta(0, 2, 3), 0);
  assert.equal(s.incompleteBeta(1, 2, 3), 1);
  assert.ok(Number.isNaN(s.incompleteBeta(1.5, 2, 3)));
});

test('Student t tail probabilities match the closed forms for df = 1, 2 and the normal limit', () => {
  // df = 1 (Cauchy): P(|T| >= t) = 1 - 2 atan(t) / π.
  for (const t of [0.1, 1, 3.5, 40]) {
    close(s.studentTwoSided(t, 1), 1 - 2 * Math.atan(t) / Math.PI, 1e-12, `df=1 t=${t}`);
  }
  // df = 2: P(|T| >= t) = 1 - t / sqrt(2 + t^2).
  for (const t of [0.2, 1, 2.5, 25]) {
    close(s.studentTwoSided(t, 2), 1 - t / Math.sqrt(2 + t * t), 1e-12, `df=2 t=${t}`);
  }
  // df = 4: P(|T| >= t) = 1 - (t / sqrt(4 + t^2)) (1 + 2 / (4 + t^2)).
  for (const t of [0.5, 2, 6]) {
    const q = t / Math.sqrt(4 + t * t);
    close(s.studentTwoSided(t, 4), 1 - q * (1 + 2 / (4 + t * t)), 1e-12, `df=4 t=${t}`);
  }
  // Very large df: the normal distribution, P(|Z| >= 1.959963984540054) = 0.05.
  close(s.studentTwoSided(1.959963984540054, 1e9), 0.05, 1e-6, 'normal limit');
  close(s.studentTwoSided(-1, 1), 0.5, 1e-12, 'symmetric in t');
  assert.equal(s.studentTwoSided(0, 3), 1);
});

test('studentQuantile inverts the CDF (R: qt(0.975, 10) = 2.228139, qt(0.995, 5) = 4.032143)', () => {
  close(s.studentQuantile(0.975, 10), 2.228139, 1e-6, 'qt(0.975, 10)');
  close(s.studentQuantile(0.995, 5), 4.032143, 1e-6, 'qt(0.995, 5)');
  close(s.studentQuantile(0.975, 1), Math.tan(Math.PI * 0.475), 1e-9, 'qt(0.975, 1) = tan(0.475π)');
  close(s.studentQuantile(0.025, 10), -2.228139, 1e-6, 'qt(0.025, 10)');
});

test("welchTTest reproduces R's t.test(extra ~ group, data = sleep)", () => {
  // R 4.x:
  //   > t.test(extra ~ group, data = sleep)
  //   Welch Two Sample t-test
  //   t = -1.8608, df = 17.776, p-value = 0.07939
  //   95 percent confidence interval: -3.3654832  0.2054832
  //   mean in group 1 0.75, mean in group 2 2.33
  const group1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
  const group2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];
  // welchTTest(x, y) tests y - x; R's formula orders group 1 - group 2.
  const r = s.welchTTest(group2, group1);
  close(r.t, -1.8608, 5e-5, 't');
  close(r.df, 17.776, 5e-4, 'df');
  close(r.p, 0.07939, 5e-6, 'p-value');
  close(r.meanY, 0.75, 1e-12, 'mean of group 1');
  close(r.meanX, 2.33, 1e-12, 'mean of group 2');
  const half = s.studentQuantile(0.975, r.df) * r.stderr;
  close(r.meanY - r.meanX - half, -3.3654832, 1e-6, 'confidence interval, low');
  close(r.meanY - r.meanX + half, 0.2054832, 1e-6, 'confidence interval, high');
});

test('welchTTest by hand: unequal sizes and variances', () => {
  // x: mean 2, var 1 (n 3); y: mean 6, var 4 (n 5).
  // se² = 1/3 + 4/5 = 17/15; t = 4 / sqrt(17/15);
  // df = (17/15)² / ((1/3)²/2 + (4/5)²/4) = 1.28444 / 0.21556 = 5.95876.
  const r = s.welchTTest([1, 2, 3], [4, 4, 6, 8, 8]);
  close(r.meanX, 2, 1e-12, 'mean x');
  close(r.meanY, 6, 1e-12, 'mean y');
  close(r.t, 4 / Math.sqrt(17 / 15), 1e-12, 't');
  close(r.df, (17 / 15) ** 2 / ((1 / 3) ** 2 / 2 + (4 / 5) ** 2 / 4), 1e-12, 'df');
  close(r.p, s.incompleteBeta(r.df / (r.df + r.t * r.t), r.df / 2, 0.5), 1e-15, 'p from I_x(df/2, 1/2)');
  assert.ok(r.p > 0.001 && r.p < 0.01, `p = ${r.p}`);
});

test('welchTTest gives NaN where R refuses: fewer than two values, constant data', () => {
  assert.ok(Number.isNaN(s.welchTTest([1], [2, 3]).p));
  assert.ok(Number.isNaN(s.welchTTest([5, 5, 5], [5, 5, 5]).p));
});

test("stars follow compare.R's thresholds", () => {
  assert.equal(s.stars(0.0009), '***');
  assert.equal(s.stars(0.001), '**');
  assert.equal(s.stars(0.009), '**');
  assert.equal(s.stars(0.01), '*');
  assert.equal(s.stars(0.049), '*');
  assert.equal(s.stars(0.05), '');
  assert.equal(s.stars(NaN), '');
});

test('compareSamples pairs runs in order for the ratio median, min and max', () => {
  const c = s.compareSamples([100, 200, 100, 100], [110, 230, 100, 120]);
  // Ratios 1.1, 1.15, 1.0, 1.2: median 1.125.
  close(c.ratio.median, 1.125, 1e-12, 'median');
  close(c.ratio.min, 1.0, 1e-12, 'min');
  close(c.ratio.max, 1.2, 1e-12, 'max');
  close(c.improvement, (140 - 125) / 125 * 100, 1e-9, 'improvement %');
});

test('parseCsv and comparisons: methods against method=end, old against new', () => {
  const csv = [
    s.CSV_HEADER,
    s.csvRow({ binary: 'old', filename: 'http/x.js', configuration: 'len=64 method=end', rate: 100, time: 5, cpu: 10 }),
    s.csvRow({ binary: 'new', filename: 'http/x.js', configuration: 'len=64 method=end', rate: 120, time: 5, cpu: 9 }),
    s.csvRow({ binary: 'old', filename: 'http/x.js', configuration: 'len=64 method=fastEnd', rate: 110, time: 5, cpu: 8 }),
    s.csvRow({ binary: 'new', filename: 'http/x.js', configuration: 'len=64 method=fastEnd', rate: 150, time: 5 }),
  ].join('\n');
  const rows = s.parseCsv(csv);
  assert.equal(rows.length, 4);
  assert.deepEqual(rows[0], { binary: 'old', filename: 'http/x.js', configuration: 'len=64 method=end', rate: 100, time: 5, cpu: 10 });
  assert.ok(Number.isNaN(rows[3].cpu));
  const list = s.comparisons(rows);
  const method = list.filter((c) => c.kind === 'method');
  assert.deepEqual(method.map((c) => [c.binary, c.method, c.ratio.median]),
                   [['old', 'fastEnd', 1.1], ['new', 'fastEnd', 1.25]]);
  const binary = list.filter((c) => c.kind === 'binary');
  assert.deepEqual(binary.map((c) => [c.configuration, c.ratio.median]),
                   [['len=64 method=end', 1.2], ['len=64 method=fastEnd', 150 / 110]]);
  assert.match(s.formatTable(list), /fastEnd\/end/);
});

test('comparisons: method=plain is a baseline too (framework apps), never a fast method', () => {
  const row = (configuration, rate) => ({ binary: 'node', filename: 'http/fastify.js', configuration, rate, time: 5, cpu: 20 });
  const rows = [
    row('route=json len=64 method=plain', 100),
    row('route=json len=64 method=patched', 105),
    row('route=json len=64 method=plain', 100),
    row('route=json len=64 method=patched', 95),
    row('route=text len=64 method=plain', 200),
    row('route=text len=64 method=patched', 220),
  ];
  assert.deepEqual(s.BASELINE_METHODS, ['end', 'plain']);
  assert.ok(s.isBaseline('plain') && s.isBaseline('end') && !s.isBaseline('patched'));
  const list = s.comparisons(rows);
  assert.deepEqual(list.map((c) => [c.configuration, c.old, c.new, c.ratio.median]),
                   [['route=json len=64', 'plain', 'patched', 1], ['route=text len=64', 'plain', 'patched', 1.1]]);
  assert.match(s.formatTable(list), /route=json len=64 patched\/plain/);
  // A case without a baseline method has nothing to compare against.
  assert.deepEqual(s.comparisons([row('len=64 method=patched', 1)]), []);
});
