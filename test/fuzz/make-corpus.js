'use strict';

// Writes the seed inputs of test/fuzz/corpus/ in head_fuzzer.cc's layout
// (FuzzedDataProvider): strings from the front, each ended by "\\\n" (a
// backslash inside one is doubled), integers from the end. Re-run after
// changing that layout or src/layout.h's StateBit:
// node test/fuzz/make-corpus.js

const fs = require('node:fs');
const path = require('node:path');

// layout::StateBit, read from src/layout.h by the names lib/ reads
// (kConstants), so that no copy of the contract lives here.
function stateBits() {
  const header = fs.readFileSync(path.join(__dirname, '..', '..', 'src', 'layout.h'), 'latin1');
  const enumBody = /enum StateBit : uint32_t \{([\s\S]*?)\};/.exec(header)[1];
  const byEnum = {};
  for (const m of enumBody.matchAll(/(k\w+) = 1u << (\d+)/g)) byEnum[m[1]] = 1 << Number(m[2]);
  const bits = {};
  for (const m of header.matchAll(/\{"(\w+)", (k\w+)\}/g)) {
    if (m[2] in byEnum) bits[m[1]] = byEnum[m[2]];
  }
  if (Object.keys(bits).length !== Object.keys(byEnum).length) {
    throw new Error('src/layout.h: a StateBit without its kConstants name');
  }
  return bits;
}

const {
  SEND_DATE, SHOULD_KEEP_ALIVE, USE_CHUNKED_BY_DEFAULT, HAS_BODY, REMOVED_CONNECTION,
  REMOVED_CONTENT_LENGTH, REMOVED_TRANSFER_ENCODING, MAX_REQUESTS_REACHED, LAST,
  KEEP_ALIVE_TIMEOUT_SET, CONTENT_LENGTH_AS_FIELD,
} = stateBits();
// head_fuzzer.cc's own options, above the state bits (kFuzz*).
const LARGE_BODY = 1 << 13;
const HEAD_UTF8 = 1 << 14;
const BUFFER_BODY = 1 << 15;

// A keep-alive HTTP/1.1 response with a body: what end() passes.
const BASE = SHOULD_KEEP_ALIVE | USE_CHUNKED_BY_DEFAULT | HAS_BODY;

// One input: status, bits, keep-alive seconds, max requests, body length,
// reason, [name, value] pairs.
function input({ status, bits, seconds = 5n, max = 0n, length = 5n,
                 reason, fields }) {
  const strings = [reason, ...fields.flat()]
    .map((s) => Buffer.from(s.replace(/\\/g, '\\\\') + '\\\n', 'latin1'));
  // Consumed from the end, most significant byte first: write reversed.
  const order = [];
  const push = (value, bytes) => {
    for (let i = bytes - 1; i >= 0; i--) order.push(Number((value >> BigInt(8 * i)) & 0xffn));
  };
  push(BigInt(status + 5), 2);                      // ConsumeIntegralInRange(-5, 1004)
  push(BigInt(bits), 2);                            // uint16_t
  const int64 = (v) => BigInt.asUintN(64, v - (-(2n ** 63n)));
  push(int64(seconds), 8);
  push(int64(max), 8);
  // uint64_t; `% 600` keeps it small unless LARGE_BODY (`% 2^53`).
  push(BigInt.asUintN(64, length), 8);
  return Buffer.concat([...strings, Buffer.from(order.reverse())]);
}

const seeds = {
  'ok-keep-alive': { status: 200, bits: BASE | SEND_DATE | KEEP_ALIVE_TIMEOUT_SET,
    reason: 'OK', fields: [['Content-Type', 'text/plain; charset=utf-8']] },
  'send-json': { status: 201, bits: BASE | CONTENT_LENGTH_AS_FIELD | KEEP_ALIVE_TIMEOUT_SET | HEAD_UTF8,
    max: 100n, reason: 'Created',
    fields: [['Content-Type', 'application/json'], ['X-Request-Id', 'abc-123']] },
  'send-buffer': { status: 200, bits: BASE | CONTENT_LENGTH_AS_FIELD | BUFFER_BODY, length: 0n,
    reason: 'OK', fields: [['Content-Type', 'application/octet-stream']] },
  'connection-close': { status: 404, bits: BASE, reason: 'Not Found',
    fields: [['Connection', 'close'], ['Set-Cookie', 'a=1'], ['Set-Cookie', 'b=2']] },
  'http10-content-length': { status: 200,
    bits: SHOULD_KEEP_ALIVE | HAS_BODY | KEEP_ALIVE_TIMEOUT_SET,
    length: 3n, reason: 'OK', fields: [['Content-Length', '3']] },
  'http10-until-close': { status: 200, bits: SHOULD_KEEP_ALIVE | HAS_BODY,
    reason: 'OK', fields: [] },
  'no-content': { status: 204, bits: BASE | SEND_DATE, reason: 'No Content',
    fields: [['Date', 'Sun, 06 Nov 1994 08:49:37 GMT']] },
  'head-request': { status: 200, bits: BASE & ~HAS_BODY, reason: 'OK',
    fields: [['ETag', '"x"']] },
  'large-length': { status: 200, bits: BASE | LARGE_BODY, length: 2n ** 53n - 1n,
    reason: 'OK', fields: [] },
  // Fields the addon leaves to Node: each step-aside reason.
  'transfer-encoding': { status: 200, bits: BASE, reason: 'OK',
    fields: [['Transfer-Encoding', 'gzip, chunked']] },
  'expect': { status: 200, bits: BASE, reason: 'OK', fields: [['Expect', '100-continue']] },
  'trailer': { status: 200, bits: BASE, reason: 'OK', fields: [['Trailer', 'X-Checksum']] },
  'latin1': { status: 200, bits: BASE | HEAD_UTF8, reason: 'Tr\xe8s bien',
    fields: [['Content-Disposition', 'attachment; filename="\xe9t\xe9.txt"'], ['X-Tab', 'a\tb ']] },
  'latin1-head': { status: 200, bits: BASE | HEAD_UTF8, reason: 'Tr\xe8s bien',
    fields: [['X-Name', '\xe9t\xe9'], ['Content-Disposition', 'inline']] },
  'trailer-date': { status: 200, bits: BASE | SEND_DATE, reason: 'OK',
    fields: [['Date', 'Sun, 06 Nov 1994 08:49:37 GMT'], ['Trailer', 'X-Checksum']] },
  // The longest Content-Length value read as plain decimal (15 digits), and
  // two Content-Length fields, the last one deciding.
  'content-length-digits': { status: 200, bits: BASE, reason: 'OK',
    fields: [['Content-Length', '999999999999999']] },
  'content-length-twice': { status: 200, bits: BASE | CONTENT_LENGTH_AS_FIELD, reason: 'OK',
    fields: [['Content-Length', '5'], ['content-length', '0x10']] },
  'chunked-body': { status: 200, bits: BASE | REMOVED_CONTENT_LENGTH, length: 11n,
    reason: 'OK', fields: [['Content-Type', 'text/plain']] },
  'removed': { status: 200,
    bits: BASE | REMOVED_CONNECTION | REMOVED_CONTENT_LENGTH | REMOVED_TRANSFER_ENCODING | LAST,
    reason: 'OK', fields: [] },
  'max-requests': { status: 503, bits: BASE | MAX_REQUESTS_REACHED | KEEP_ALIVE_TIMEOUT_SET,
    seconds: -2n, reason: 'Service Unavailable',
    fields: [['Keep-Alive', 'timeout=10'], ['Retry-After', '1']] },
  'upgrade': { status: 101, bits: BASE, reason: 'Switching Protocols',
    fields: [['Connection', 'Upgrade'], ['Upgrade', 'websocket']] },
  'split-attempt': { status: 302, bits: BASE, reason: 'Found',
    fields: [['Location', '/a\r\nSet-Cookie: evil=1'], ['X-Bad Name', 'x']] },
  'nul-in-value': { status: 200, bits: BASE, reason: 'OK',
    fields: [['X-Id', 'a\0b'], ['X-Other', 'c']] },
};

const dir = path.join(__dirname, 'corpus');
fs.mkdirSync(dir, { recursive: true });
for (const name of fs.readdirSync(dir)) {
  if (!(name in seeds)) fs.rmSync(path.join(dir, name));
}
for (const [name, seed] of Object.entries(seeds)) {
  fs.writeFileSync(path.join(dir, name), input(seed));
}
console.log(`wrote ${Object.keys(seeds).length} seeds to ${path.relative(process.cwd(), dir)}`);
