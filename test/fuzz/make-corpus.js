'use strict';

// Writes the seed inputs of test/fuzz/corpus/ in head_fuzzer.cc's layout
// (FuzzedDataProvider): strings from the front, each ended by "\\\n" (a
// backslash inside one is doubled), integers from the end. Re-run after
// changing that layout: node test/fuzz/make-corpus.js

const fs = require('node:fs');
const path = require('node:path');

// MessageState bits, as head_fuzzer.cc reads `bits`.
const SEND_DATE = 1 << 0;
const KEEP_ALIVE = 1 << 1;
const HTTP10 = 1 << 2;
const NO_BODY = 1 << 3;
const REMOVED_CONNECTION = 1 << 4;
const REMOVED_CONTENT_LENGTH = 1 << 5;
const REMOVED_TRANSFER_ENCODING = 1 << 6;
const MAX_REQUESTS_REACHED = 1 << 7;
const LAST = 1 << 8;
const KEEP_ALIVE_TIMEOUT = 1 << 9;
const LENGTH_AS_FIELD = 1 << 10;

// One input: status, bits, keep-alive seconds, max requests, content length
// (-1 for none), reason, [name, value] pairs.
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
  // `% 600` keeps small lengths; -1 stays -1 (any negative is none).
  push(int64(length), 8);
  return Buffer.concat([...strings, Buffer.from(order.reverse())]);
}

const seeds = {
  'ok-keep-alive': { status: 200, bits: SEND_DATE | KEEP_ALIVE | KEEP_ALIVE_TIMEOUT,
    reason: 'OK', fields: [['Content-Type', 'text/plain; charset=utf-8']] },
  'send-json': { status: 201, bits: KEEP_ALIVE | LENGTH_AS_FIELD | KEEP_ALIVE_TIMEOUT, max: 100n,
    reason: 'Created', fields: [['Content-Type', 'application/json'], ['X-Request-Id', 'abc-123']] },
  'connection-close': { status: 404, bits: KEEP_ALIVE, reason: 'Not Found',
    fields: [['Connection', 'close'], ['Set-Cookie', 'a=1'], ['Set-Cookie', 'b=2']] },
  'http10-content-length': { status: 200, bits: KEEP_ALIVE | HTTP10 | KEEP_ALIVE_TIMEOUT,
    reason: 'OK', fields: [['Content-Length', '3']] },
  'no-content': { status: 204, bits: KEEP_ALIVE | SEND_DATE, reason: 'No Content',
    fields: [['Date', 'Sun, 06 Nov 1994 08:49:37 GMT']] },
  'head-request': { status: 200, bits: KEEP_ALIVE | NO_BODY, reason: 'OK',
    fields: [['ETag', '"x"']] },
  'trailer-chunked': { status: 200, bits: KEEP_ALIVE, length: -1n, reason: 'OK',
    fields: [['Trailer', 'X-Checksum']] },
  'removed': { status: 200, bits: REMOVED_CONNECTION | REMOVED_CONTENT_LENGTH | REMOVED_TRANSFER_ENCODING | LAST,
    reason: 'OK', fields: [] },
  'max-requests': { status: 503, bits: KEEP_ALIVE | MAX_REQUESTS_REACHED | KEEP_ALIVE_TIMEOUT, seconds: -2n,
    reason: 'Service Unavailable', fields: [['Keep-Alive', 'timeout=10'], ['Retry-After', '1']] },
  'upgrade': { status: 101, bits: KEEP_ALIVE, reason: 'Switching Protocols',
    fields: [['Connection', 'Upgrade'], ['Upgrade', 'websocket']] },
  'latin1': { status: 200, bits: KEEP_ALIVE, reason: 'Tr\xe8s bien',
    fields: [['Content-Disposition', 'attachment; filename="\xe9t\xe9.txt"'], ['X-Tab', 'a\tb ']] },
  'split-attempt': { status: 302, bits: KEEP_ALIVE, reason: 'Found',
    fields: [['Location', '/a\r\nSet-Cookie: evil=1'], ['X-Bad Name', 'x']] },
};

const dir = path.join(__dirname, 'corpus');
fs.mkdirSync(dir, { recursive: true });
for (const [name, seed] of Object.entries(seeds)) {
  fs.writeFileSync(path.join(dir, name), input(seed));
}
console.log(`wrote ${Object.keys(seeds).length} seeds to ${path.relative(process.cwd(), dir)}`);
