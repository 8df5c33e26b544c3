'use strict';

// Rewrites the FallbackReason block of lib/index.d.ts from lib/reasons.js
// (the registry): `node scripts/reasons-dts.js`. test/reasons.test.js
// fails when they differ.

const fs = require('node:fs');
const path = require('node:path');
const { REASONS } = require('../lib/reasons');

const file = path.join(__dirname, '..', 'lib', 'index.d.ts');
const text = fs.readFileSync(file, 'utf8');
const start = text.indexOf("  /**\n   * Why a call went to Node's own code");
const end = text.indexOf('  interface Stats {');
if (start === -1 || end === -1 || end < start) throw new Error('lib/index.d.ts: the FallbackReason block is not where expected');

let block = "  /**\n   * Why a call went to Node's own code (stats().reasons), as lib/reasons.js\n   * names them:\n";
for (const [name, meaning] of Object.entries(REASONS)) block += `   * - '${name}': ${meaning}\n`;
block += '   */\n  type FallbackReason =\n';
block += Object.keys(REASONS).map((name) => `    | '${name}'`).join('\n') + ';\n\n';
fs.writeFileSync(file, text.slice(0, start) + block + text.slice(end));
console.log(`lib/index.d.ts: ${Object.keys(REASONS).length} reasons`);
