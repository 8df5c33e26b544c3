'use strict';

// The fallback reasons: one registry (lib/reasons.js), the addon's names
// among them, index.d.ts's FallbackReason union equal to it, lib/ using
// only registered names; and each reason the addon gives, reached by the
// field that causes it, with Node's bytes and events.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { REASONS, R } = require('../lib/reasons');
const { binding } = require('../lib/binding');
const { differential, get } = require('./helpers/differential');
const { byHeadRenderer, headRuleFallback, refusedHead } = require('./helpers/node-rules');

const root = path.join(__dirname, '..');
const BODY = 'hello world';

describe('the registry of fallback reasons', () => {
  test('every name has a one-line meaning', () => {
    for (const [name, meaning] of Object.entries(REASONS)) {
      assert.match(name, /^[a-z0-9]+(?:-[a-z0-9]+)*$/, name);
      assert.equal(typeof meaning, 'string');
      assert.ok(meaning.length > 10 && !meaning.includes('\n'), `${name}: ${meaning}`);
    }
  });

  test('every name the addon gives (src/layout.h) is registered', () => {
    const native = binding.layout.STEP_ASIDE_NAMES;
    assert.equal(native[0], '');
    assert.ok(native.length > 1);
    for (const name of native.slice(1)) assert.ok(name in REASONS, `${name} is not in lib/reasons.js`);
  });

  test('lib/ names reasons only through R, and only registered ones', () => {
    const lib = path.join(root, 'lib');
    for (const file of fs.readdirSync(lib).filter((f) => f.endsWith('.js'))) {
      const source = fs.readFileSync(path.join(lib, file), 'utf8');
      for (const [, id] of source.matchAll(/\bR\.([A-Z0-9_]+)/g)) {
        assert.ok(id in R, `${file}: R.${id} is not a registered reason`);
      }
      if (file === 'reasons.js') continue;
      // A reason spelled as a string literal where stats are counted.
      for (const [call] of source.matchAll(/countFallback\(\s*'[^']*'/g)) {
        assert.fail(`${file}: ${call}: use R.*`);
      }
    }
  });

  test("index.d.ts's FallbackReason union and its documentation are exactly the registry", () => {
    const types = fs.readFileSync(path.join(root, 'lib', 'index.d.ts'), 'utf8');
    const union = /type FallbackReason =([^;]+);/.exec(types);
    assert.ok(union, 'index.d.ts declares type FallbackReason (node scripts/reasons-dts.js writes it)');
    const names = [...union[1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
    assert.deepEqual([...names].sort(), Object.keys(REASONS).sort());
    assert.equal(new Set(names).size, names.length, 'no name twice');
    // Its documentation gives each meaning as the registry does.
    const documented = Object.fromEntries(
      [...types.matchAll(/^\s*\* - '([^']+)': (.*)$/gm)].map((m) => [m[1], m[2]]));
    assert.deepEqual(documented, { ...REASONS }, 'run node scripts/reasons-dts.js');
  });
});

/** A handler that sets `fields` with setHeader() and ends with fastEnd/end. */
function ending(fields) {
  return (req, res, ctx) => {
    for (const [name, value] of Object.entries(fields)) res.setHeader(name, value);
    ctx.api.end(res, BODY);
  };
}

/** A handler that sends `fields` with send() (Node: writeHead() + end()). */
function sending(fields) {
  return (req, res, ctx) => ctx.api.send(res, 200, fields, BODY);
}

// The addon's reasons, each caused by its field: what matchHeader() and
// _storeHeader() do for them is Node's, byte for byte.
describe('the addon names the field that made it step aside', () => {
  const cases = [
    ['field-transfer-encoding', { 'Transfer-Encoding': 'gzip, chunked' }],
    ['field-expect', { Expect: 'x-custom' }],
    ['field-trailer', { Trailer: 'X-Checksum' }],
    ['field-content-disposition', { 'Content-Disposition': 'attachment; filename="\u00e9t\u00e9.txt"' }],
  ];
  for (const [reason, fields] of cases) {
    // Where Node renders every head (Node 18), it sends a head with an
    // Expect field at once (_storeHeader()'s `state.expect`): the body is
    // then Node's ('head-sent').
    const expected = reason === 'field-expect' ?
      byHeadRenderer({ addon: { fast: 0, fallback: { [reason]: 1 } }, node: { fast: 0, fallback: { 'head-sent': 1 } } }) :
      headRuleFallback(reason);
    test(`${reason}: end() after setHeader()`, () =>
      differential({ request: get(), handler: ending(fields), ...expected }));
  }
  test('chunked-body: end() after removeHeader("Content-Length")', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.removeHeader('Content-Length');
        ctx.api.end(res, BODY);
      },
      ...headRuleFallback('chunked-body'),
    }));
  test('invalid: send() with a field-value Node refuses throws Node\'s error, nothing written', async () => {
    const seen = [];
    await differential({
      request: get(),
      handler: (req, res, ctx) => {
        try {
          ctx.api.send(res, 200, { 'X-Bad': 'a\rb' }, BODY);
        } catch (err) {
          seen.push(err.code);
          res.writeHead(500, { 'Content-Length': 0 });
          res.end();
        }
      },
      ...refusedHead('invalid'),
    });
    assert.deepEqual(seen, ['ERR_INVALID_CHAR', 'ERR_INVALID_CHAR']);
  });
  test('field-expect: send() with an Expect field', () =>
    differential({
      request: get(),
      handler: sending({ Expect: 'x-custom' }),
      ...byHeadRenderer({
        addon: { fast: 0, fallback: { 'field-expect': 1 } },
        node: { fast: 0, fallback: { 'head-sent': 1 } },
      }),
    }));
});
