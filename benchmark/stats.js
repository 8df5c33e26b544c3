'use strict';

// The statistics table of a compare.js CSV, as Node's benchmark/compare.R:
//
//   node benchmark/compare.js ... > out.csv
//   node benchmark/stats.js out.csv        (or: ... | node benchmark/stats.js)
//
// Per configuration: the mean rate of each side, the improvement, Welch's
// t-test p-value with stars (* p < 0.05, ** p < 0.01, *** p < 0.001), the
// median ratio new/old with min-max over runs paired in order, compare.R's
// accuracy, and server CPU µs per response. Methods are compared with their
// Node baseline (method=end) within each binary; binaries old and new with
// each other.

const fs = require('node:fs');
const stats = require('./_stats');

const file = process.argv[2];
if (file === '-h' || file === '--help') {
  console.error('usage: node benchmark/stats.js [out.csv]   (stdin without a file)');
  process.exit(0);
}
const text = fs.readFileSync(file === undefined || file === '-' ? 0 : file, 'utf8');
const rows = stats.parseCsv(text);
process.stdout.write(stats.formatTable(stats.comparisons(rows)));
