'use strict';

// An SVG chart of a compare.js CSV: the ratio fast/baseline (median over
// runs, whiskers min-max) by body length, one line per case (file and
// method) and Node binary. Hand-written SVG, no dependency.
//
//   node benchmark/plot.js out.csv [--out out.svg] [--label old="Node 20"]
//                                  [--label new="Node 26"] [--title text]
//
// The SVG goes to --out (default: the CSV's name with .svg).

const fs = require('node:fs');
const { parseArgs } = require('node:util');
const stats = require('./_stats');

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f'];
const DASHES = ['', '7 4', '2 3', '10 3 2 3'];

function escapeXml(s) {
  return String(s).replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function lenOf(configuration) {
  const m = /(?:^| )len=(\d+)/.exec(configuration);
  return m === null ? NaN : Number(m[1]);
}

function withoutLen(configuration) {
  return configuration.split(' ').filter((p) => !p.startsWith('len=') && !p.startsWith('duration=')).join(' ');
}

/** Series of points { len, median, min, max } from the method comparisons of `rows`. */
function seriesOf(rows) {
  const series = new Map();
  for (const c of stats.comparisons(rows)) {
    if (c.kind !== 'method') continue;
    const len = lenOf(c.configuration);
    if (!Number.isFinite(len)) continue;
    const name = c.filename.replace(/^http\//, '').replace(/\.js$/, '');
    const rest = withoutLen(c.configuration).replace(/\bc=50\b/, '').trim();
    const key = `${c.binary}\0${name}\0${c.method}\0${rest}`;
    if (!series.has(key)) {
      series.set(key, { binary: c.binary, caseName: `${name} ${c.method}/${c.old}${rest ? ` ${rest}` : ''}`, points: [] });
    }
    series.get(key).points.push({ len, median: c.ratio.median, min: c.ratio.min, max: c.ratio.max });
  }
  for (const s of series.values()) s.points.sort((a, b) => a.len - b.len);
  return [...series.values()];
}

/** The chart as an SVG document. `labels` maps binary labels to names. */
function svgChart(rows, { labels = {}, title } = {}) {
  const series = seriesOf(rows);
  const W = 960;
  const H = 540;
  const left = 70;
  const right = 330;
  const top = 56;
  const bottom = 64;
  const plotW = W - left - right;
  const plotH = H - top - bottom;
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
           'font-family="sans-serif" font-size="12">');
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${W / 2}" y="24" text-anchor="middle" font-size="16">${escapeXml(title ||
    'fast-response: responses/s fast / Node baseline, by body length')}</text>`);
  out.push(`<text x="${W / 2}" y="42" text-anchor="middle" fill="#555">` +
           'median over runs, whiskers min-max; above 1 is faster than Node</text>');
  if (series.length === 0) {
    out.push(`<text x="${W / 2}" y="${H / 2}" text-anchor="middle">no method comparisons with len= in this CSV</text>`);
    out.push('</svg>');
    return `${out.join('\n')}\n`;
  }

  const lens = [...new Set(series.flatMap((s) => s.points.map((p) => p.len)))].sort((a, b) => a - b);
  const values = series.flatMap((s) => s.points.flatMap((p) => [p.min, p.max, p.median])).filter(Number.isFinite);
  const step = 0.05;
  const yMin = Math.floor(Math.min(0.95, ...values) / step) * step;
  const yMax = Math.ceil(Math.max(1.3, ...values) / step) * step;
  const lx0 = Math.log10(lens[0]);
  const lx1 = Math.log10(lens[lens.length - 1]);
  const pad = lens.length > 1 ? (lx1 - lx0) * 0.06 : 1;
  const x = (len) => left + (Math.log10(len) - lx0 + pad) / (lx1 - lx0 + 2 * pad) * plotW;
  const y = (v) => top + (yMax - v) / (yMax - yMin) * plotH;

  // Grid and axes.
  const gridEvery = (yMax - yMin) / step > 16 ? 0.1 : step;
  for (let v = yMin; v <= yMax + 1e-9; v += gridEvery) {
    const yy = y(v).toFixed(1);
    out.push(`<line x1="${left}" y1="${yy}" x2="${left + plotW}" y2="${yy}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${left - 8}" y="${yy}" dy="4" text-anchor="end">${v.toFixed(2)}</text>`);
  }
  for (const len of lens) {
    const xx = x(len).toFixed(1);
    out.push(`<line x1="${xx}" y1="${top}" x2="${xx}" y2="${top + plotH}" stroke="#f0f0f0"/>`);
    out.push(`<text x="${xx}" y="${top + plotH + 18}" text-anchor="middle">${len}</text>`);
  }
  out.push(`<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`);
  out.push(`<line x1="${left}" y1="${y(1).toFixed(1)}" x2="${left + plotW}" y2="${y(1).toFixed(1)}" ` +
           'stroke="#000" stroke-dasharray="4 3"/>');
  out.push(`<text x="${left + plotW / 2}" y="${H - 20}" text-anchor="middle">body length, bytes (log scale)</text>`);
  out.push(`<text transform="translate(18 ${top + plotH / 2}) rotate(-90)" text-anchor="middle">` +
           'ratio fast / baseline</text>');

  // Series: colour per case, dash per binary.
  const cases = [...new Set(series.map((s) => s.caseName))];
  const binaries = [...new Set(series.map((s) => s.binary))];
  const legend = [];
  series.forEach((s, i) => {
    const color = PALETTE[cases.indexOf(s.caseName) % PALETTE.length];
    const dash = DASHES[binaries.indexOf(s.binary) % DASHES.length];
    // A small horizontal offset keeps whiskers of one length apart.
    const shift = (i - (series.length - 1) / 2) * 3;
    const pts = s.points.filter((p) => Number.isFinite(p.median));
    const d = pts.map((p, j) => `${j === 0 ? 'M' : 'L'}${(x(p.len) + shift).toFixed(1)} ${y(p.median).toFixed(1)}`).join(' ');
    out.push(`<g stroke="${color}" fill="${color}">`);
    out.push(`<path d="${d}" fill="none" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`);
    for (const p of pts) {
      const xx = (x(p.len) + shift).toFixed(1);
      if (Number.isFinite(p.min) && Number.isFinite(p.max)) {
        out.push(`<line x1="${xx}" y1="${y(p.min).toFixed(1)}" x2="${xx}" y2="${y(p.max).toFixed(1)}" stroke-width="1"/>`);
      }
      out.push(`<circle cx="${xx}" cy="${y(p.median).toFixed(1)}" r="3"><title>` +
               `${escapeXml(`${s.caseName}, ${labels[s.binary] || s.binary}, len=${p.len}: ` +
               `${p.median.toFixed(3)} (${p.min.toFixed(3)}-${p.max.toFixed(3)})`)}</title></circle>`);
    }
    out.push('</g>');
    legend.push({ color, dash, text: `${s.caseName}, ${labels[s.binary] || s.binary}` });
  });
  legend.forEach((item, i) => {
    const ly = top + 8 + i * 18;
    const lx = left + plotW + 16;
    out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 28}" y2="${ly}" stroke="${item.color}" stroke-width="2"` +
             `${item.dash ? ` stroke-dasharray="${item.dash}"` : ''}/>`);
    out.push(`<text x="${lx + 36}" y="${ly}" dy="4">${escapeXml(item.text)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

module.exports = { svgChart, seriesOf };

if (require.main === module) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      out: { type: 'string' },
      label: { type: 'string', multiple: true, default: [] },
      title: { type: 'string' },
    },
  });
  if (positionals.length !== 1) {
    console.error('usage: node benchmark/plot.js out.csv [--out out.svg] [--label old="Node 20"] [--title text]');
    process.exit(2);
  }
  const labels = Object.fromEntries(values.label.map((l) => {
    const i = l.indexOf('=');
    return [l.slice(0, i), l.slice(i + 1)];
  }));
  const rows = stats.parseCsv(fs.readFileSync(positionals[0], 'utf8'));
  const out = values.out || positionals[0].replace(/\.csv$/i, '') + '.svg';
  fs.writeFileSync(out, svgChart(rows, { labels, title: values.title }));
  console.error(`wrote ${out}`);
}
