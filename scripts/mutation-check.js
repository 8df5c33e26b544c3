'use strict';

// `npm run test:mutation`: does the conformance suite have teeth?
//
// Copies the package (sources, binding.gyp, the suites of SUITES and their
// harness and helpers; node_modules symlinked) to a temporary directory,
// builds the addon there, checks that the unmutated copy passes, then
// applies one small breaking edit at a time to the copy (rebuilding it when
// the edit is in src/), runs the suites there in order until one fails and
// requires every mutant to be killed: at least one test fails. The sources
// in this repository are never modified. The layout mutants drift the
// contract between lib/ and the addon (src/layout.h): a name exported with
// another's bit or slot.
//
// A mutant with `suites` runs only those (the client mutants: only
// test/client.test.js sends requests).
//
// Prints the table mutant -> the suite that killed it, and exits non-zero
// when a mutant survives or an edit no longer applies (the code it targets
// changed: update the mutant).
//
//   node scripts/mutation-check.js [--only name,name] [--keep] [--verbose]
//   node scripts/mutation-check.js --applies
//
// --applies builds and runs nothing: it checks that every mutant's edit
// still applies to the sources as they are (`npm run lint` runs it, so a
// mutant whose code moved fails there, not only in a mutation run).
//
// The suites run with FAST_RESPONSE_TEST_BAIL=1 (stop at the first failure)
// and FAST_RESPONSE_TEST_TIMEOUT_MS=15000 (a mutant that hangs connections
// fails sooner).

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.join(__dirname, '..');
const args = process.argv.slice(2);
const keep = args.includes('--keep');
const verbose = args.includes('--verbose');
const onlyAt = args.indexOf('--only');
const only = onlyAt === -1 ? null : new Set(args[onlyAt + 1].split(','));
const appliesOnly = args.includes('--applies');

const SUITES = {
  matrix: 'test/matrix.test.js',
  edges: 'test/edges.test.js',
  end: 'test/end.test.js',
  send: 'test/send.test.js',
  reasons: 'test/reasons.test.js',
  client: 'test/client.test.js',
  stream: 'test/stream.test.js',
  'write-head': 'test/write-head.test.js',
  install: 'test/install.test.js',
  wrappers: 'test/wrappers.test.js',
  loading: 'test/loading.test.js',
  'peer-faults': 'test/peer-faults.test.js',
  pipeline: 'test/pipeline.test.js',
  backpressure: 'test/backpressure.test.js',
};
const COPY = [
  'binding.gyp', 'package.json', 'register.js', 'lib', 'src', 'test/matrix-harness.js', 'test/helpers',
  'test/fixtures', 'benchmark/_cases.js', 'benchmark/_stats.js', 'benchmark/_apps.js', ...Object.values(SUITES),
];
const RUN_TIMEOUT_MS = 300000;

// Each mutant: one exact piece of text replaced in one file (`all`: every
// occurrence; otherwise it must occur exactly once).
const MUTANTS = [
  // src/head.cc: the head Node's _storeHeader() renders.
  {
    name: 'no-connection-keep-alive',
    what: 'drop the `Connection: keep-alive` line',
    file: 'src/head.cc',
    from: '      head->AppendRaw("Connection: keep-alive\\r\\n");\n',
    to: '',
  },
  {
    name: 'no-connection-close',
    what: 'drop `Connection: close` (no keep-alive)',
    file: 'src/head.cc',
    from: '      result.last = true;\n      head->AppendRaw("Connection: close\\r\\n");\n',
    to: '      result.last = true;\n',
  },
  {
    name: 'no-connection-close-at-max',
    what: 'drop `Connection: close` on the last request maxRequestsPerSocket allows',
    file: 'src/head.cc',
    from: 'state.max_requests_on_connection_reached) {\n      head->AppendRaw("Connection: close\\r\\n");\n',
    to: 'state.max_requests_on_connection_reached) {\n',
  },
  {
    name: 'no-last-on-close',
    what: '`Connection: close` without `_last` (the server keeps the connection)',
    file: 'src/head.cc',
    from: '      result.last = true;\n      head->AppendRaw("Connection: close\\r\\n");\n',
    to: '      head->AppendRaw("Connection: close\\r\\n");\n',
  },
  {
    name: 'no-keep-alive-timeout',
    what: 'drop the `Keep-Alive: timeout=` line',
    file: 'src/head.cc',
    from: 'if (state.keep_alive_timeout_set && !(fields & kFieldKeepAlive)) {',
    to: 'if (false) {',
  },
  {
    name: 'keep-alive-timeout-plus-one',
    what: 'alter the `Keep-Alive: timeout=` value (+1)',
    file: 'src/head.cc',
    from: 'head->AppendDecimal(\n              static_cast<uint64_t>(state.keep_alive_timeout_s));',
    to: 'head->AppendDecimal(\n              static_cast<uint64_t>(state.keep_alive_timeout_s) + 1);',
  },
  {
    name: 'content-length-plus-one',
    what: 'off-by-one in the Content-Length value',
    file: 'src/head.cc',
    from: 'head->AppendDecimal(static_cast<uint64_t>(state.content_length));',
    to: 'head->AppendDecimal(static_cast<uint64_t>(state.content_length) + 1);',
  },
  // src/addon.cc
  {
    name: 'native-body-for-head',
    what: 'send the body for HEAD / 204 / 304 (writeResponse)',
    file: 'src/addon.cc',
    from: '    if (state.has_body) SendBody(writer, body, false);',
    to: '    if (true) SendBody(writer, body, false);',
  },
  // src/message.cc: which fields make the path step aside.
  {
    name: 'step-aside-no-expect',
    what: 'an Expect field no longer makes the path step aside',
    file: 'src/message.cc',
    from: '  if ((fields & kFieldExpect) != 0) return kStepAsideExpect;\n',
    to: '',
  },
  // src/layout.h: the contract drifting. lib/ reads every value from the
  // addon, so a drift is one name bound to another's value (two copies of
  // a layout drifting apart is what this stands for).
  {
    name: 'layout-result-bits-swapped',
    what: 'RESULT_LAST and RESULT_SHOULD_KEEP_ALIVE exported with each other\'s bit',
    file: 'src/layout.h',
    from: '{"RESULT_LAST", kResultLast},',
    to: '{"RESULT_LAST", kResultShouldKeepAlive},',
    also: { from: '{"RESULT_SHOULD_KEEP_ALIVE", kResultShouldKeepAlive},', to: '{"RESULT_SHOULD_KEEP_ALIVE", kResultLast},' },
  },
  {
    name: 'layout-keep-alive-field-drift',
    what: 'RESULT_KEEP_ALIVE_FIELD exported as the Connection field\'s bit',
    file: 'src/layout.h',
    from: '{"RESULT_KEEP_ALIVE_FIELD", kResultKeepAliveField},',
    to: '{"RESULT_KEEP_ALIVE_FIELD", kResultConnectionField},',
  },
  {
    name: 'layout-connection-field-drift',
    what: 'RESULT_CONNECTION_FIELD exported as the Keep-Alive field\'s bit',
    file: 'src/layout.h',
    from: '{"RESULT_CONNECTION_FIELD", kResultConnectionField},',
    to: '{"RESULT_CONNECTION_FIELD", kResultKeepAliveField},',
  },
  {
    name: 'layout-state-bits-swapped',
    what: 'SEND_DATE and HAS_BODY exported with each other\'s bit',
    file: 'src/layout.h',
    from: '{"SEND_DATE", kSendDate},',
    to: '{"SEND_DATE", kHasBody},',
    also: { from: '{"HAS_BODY", kHasBody},', to: '{"HAS_BODY", kSendDate},' },
  },
  {
    name: 'layout-arg-index-shifted',
    what: 'ARG_KEEP_ALIVE_SECONDS exported as the next slot (maxRequests)',
    file: 'src/layout.h',
    from: '{"ARG_KEEP_ALIVE_SECONDS", kArgKeepAliveSeconds},',
    to: '{"ARG_KEEP_ALIVE_SECONDS", kArgMaxRequests},',
  },
  {
    name: 'layout-result-index-shifted',
    what: 'RESULT_BODY_LENGTH exported as the next slot (bytes written)',
    file: 'src/layout.h',
    from: '{"RESULT_BODY_LENGTH", kResultBodyLength},',
    to: '{"RESULT_BODY_LENGTH", kResultWritten},',
  },
  {
    name: 'js-arg-index-shifted',
    what: 'lib/ stores maxRequests one slot off',
    file: 'lib/gate.js',
    from: '  args[ARG_MAX_REQUESTS] = max;',
    to: '  args[ARG_MAX_REQUESTS + 1] = max;',
  },
  // lib/: conditions, bookkeeping.
  {
    name: 'js-body-for-head',
    what: 'send the body for HEAD / 204 / 304 (a head rendered by writeHead())',
    file: 'lib/gate.js',
    from: 'const data = bodyArgs(!res._hasBody ? BODY_NONE :',
    to: 'const data = bodyArgs(false ? BODY_NONE :',
  },
  {
    name: 'js-has-body-bit',
    what: 'tell the addon every response has a body',
    file: 'lib/gate.js',
    from: 'if (res._hasBody) bits |= HAS_BODY;',
    to: 'bits |= HAS_BODY;',
  },
  {
    name: 'js-keep-alive-round',
    what: '`Keep-Alive: timeout=` rounded instead of floored',
    file: 'lib/gate.js',
    from: 'Math.floor(t / 1000)',
    to: 'Math.round(t / 1000)',
  },
  {
    name: 'js-no-keep-alive-timeout',
    what: 'never ask for the `Keep-Alive: timeout=` line',
    file: 'lib/gate.js',
    from: 'if (res._keepAliveTimeout && res._defaultKeepAlive) bits |= KEEP_ALIVE_TIMEOUT_SET;',
    to: '',
  },
  {
    name: 'js-no-max',
    what: 'drop `max=` (maxRequestsPerSocket) from Keep-Alive',
    file: 'lib/gate.js',
    from: 'return Number.isSafeInteger(m) ? m : NaN;',
    to: 'return 0;',
  },
  {
    name: 'js-content-length-state',
    what: 'off-by-one in `_contentLength` (state only, bytes unchanged)',
    file: 'lib/gate.js',
    from: 'res._contentLength = results[RESULT_BODY_LENGTH];',
    to: 'res._contentLength = results[RESULT_BODY_LENGTH] + 1;',
  },
  {
    name: 'js-header-state',
    what: '`_header` not the rendered head (state only)',
    file: 'lib/complete.js',
    from: 'res._header = header;',
    to: 'res._header = header.toLowerCase();',
  },
  {
    name: 'js-finish-before-prefinish',
    what: "emit 'finish' before 'prefinish'",
    file: 'lib/complete.js',
    from: 'if (!res.chunkedEncoding) return nodeEnd.call(res, null, null, callback);',
    to: "res.emit('finish');\n  if (!res.chunkedEncoding) return nodeEnd.call(res, null, null, callback);",
  },
  {
    name: 'js-skip-callback',
    what: "skip the end() callback in the bookkeeping call",
    file: 'lib/complete.js',
    from: 'nodeEnd.call(res, null, null, callback)',
    to: 'nodeEnd.call(res, null, null)',
    all: true,
  },
  {
    name: 'js-skip-bookkeeping',
    what: "skip Node's end() bookkeeping (no 'prefinish' / 'finish')",
    file: 'lib/complete.js',
    from: 'if (!res.chunkedEncoding) return nodeEnd.call(res, null, null, callback);',
    to: 'if (!res.chunkedEncoding) {\n    res.finished = true;\n    return res;\n  }',
  },
  // lib/client.js: outgoing requests.
  {
    name: 'layout-agent-bit-drift',
    what: 'AGENT exported as CONTENT_LENGTH_AS_FIELD\'s bit',
    file: 'src/layout.h',
    from: '{"AGENT", kAgent},',
    to: '{"AGENT", kContentLengthAsField},',
    suites: ['client'],
  },
  {
    name: 'layout-body-bytes-slot-drift',
    what: 'ARG_BODY_BYTES exported as the slot before it (the body tag)',
    file: 'src/layout.h',
    from: '{"ARG_BODY_BYTES", kArgBodyBytes},',
    to: '{"ARG_BODY_BYTES", kArgBodyTag},',
    suites: ['client'],
  },
  {
    name: 'client-write-while-connecting',
    what: 'write a queued request on a socket that is still connecting',
    file: 'lib/client.js',
    from: '  if (socket.connecting) return R.CONNECTING;\n',
    to: '',
    suites: ['client'],
  },
  {
    name: 'client-no-agent-bit',
    what: "render a request head without the agent's keep-alive (_storeHeader()'s `|| this.agent`)",
    file: 'lib/client.js',
    from: 'args[ARG_STATE_BITS] = stateBits(req) | (req.agent ? AGENT : 0);',
    to: 'args[ARG_STATE_BITS] = stateBits(req);',
    suites: ['client'],
  },
  {
    name: 'client-no-finish',
    what: "drop the queued callbacks of a request written natively (no 'finish')",
    file: 'lib/client.js',
    from: '    if (callback !== null) process.nextTick(callback, null);\n',
    to: '',
    suites: ['client'],
  },
  // lib/stream.js: res.write() framed by the package.
  {
    name: 'stream-head-always-joined',
    what: 'join a latin1 head beyond ASCII to a UTF-8 chunk (its bytes change)',
    file: 'lib/stream.js',
    from: '  } else if (isAscii(header)) {',
    to: '  } else if (true) {',
    suites: ['stream'],
  },
  {
    name: 'stream-size-in-units',
    what: "a UTF-8 chunk's size line counts UTF-16 units, not bytes",
    file: 'lib/stream.js',
    from: "BODY_LATIN1 ? chunk.length : Buffer.byteLength(chunk, 'utf8');",
    to: 'BODY_LATIN1 ? chunk.length : chunk.length;',
    suites: ['stream'],
  },
  {
    name: 'stream-no-need-drain',
    what: "forget that write() returned false (no 'drain' from the response)",
    file: 'lib/stream.js',
    from: '  if (!ret) res[kNeedDrain] = true;\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'stream-joined-length',
    what: "a write joined to the socket's last queue entry adds nothing to its writableLength",
    file: 'lib/stream.js',
    from: '  state.length += units;\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'stream-joined-need-drain',
    what: "a joined write past the highWaterMark leaves the socket's needDrain unset (no 'drain')",
    file: 'lib/stream.js',
    from: '  if (!ret) state.needDrain = true;\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'stream-joined-callback',
    what: "a joined write's callback is lost",
    file: 'lib/stream.js',
    from: '    queued.callback = done;\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'stream-bytes-joined-end',
    what: "a write joined as bytes is left out of the entry's chunk (its bytes lost)",
    file: 'lib/stream.js',
    from: '        slabUsed = entry.end = putFramed(header, size, chunk, entry.end);\n',
    to: '        slabUsed = putFramed(header, size, chunk, entry.end);\n',
    suites: ['stream'],
  },
  {
    name: 'stream-bytes-latin1-as-utf8',
    what: 'a string copied into the slab (the head, a chunk joined as bytes) is written as UTF-8, not latin1 (a field-value beyond ASCII changes)',
    file: 'lib/stream.js',
    from: '  if (n >= SHORT_STRING) return at + slab.latin1Write(text, at, n);\n',
    to: '  if (n >= SHORT_STRING) return at + slab.utf8Write(text, at, n);\n',
    suites: ['stream'],
  },
  {
    name: 'stream-utf8-joined-end',
    what: "an ASCII chunk measured by writing it (joinUtf8()) is left out of the entry's chunk (its bytes lost)",
    file: 'lib/stream.js',
    from: '  slabUsed = entry.end = end;\n',
    to: '  slabUsed = end;\n',
    suites: ['stream'],
  },
  {
    name: 'stream-utf8-length-as-units',
    what: "a chunk beyond ASCII measured by writing it (joinUtf8()) is framed with its units for its bytes",
    file: 'lib/stream.js',
    from: '    utf8Skips = UTF8_MISS_SKIPS;\n    return bytes;\n',
    to: '    utf8Skips = UTF8_MISS_SKIPS;\n    return units;\n',
    suites: ['stream'],
  },
  {
    name: 'stream-utf8-new-slab',
    what: 'a chunk measured by writing it (joinUtf8()) may take a new slab for any room, left when the chunk is beyond ASCII (a slab per chunk)',
    file: 'lib/stream.js',
    from: '  const entry = bytesEntry(room, room <= UTF8_SLAB_ROOM);\n',
    to: '  const entry = bytesEntry(room, true);\n',
    suites: ['stream'],
  },
  {
    name: 'queued-end-data-dropped',
    what: 'Node 18-22: end(data) after a tick\'s writes ends the queued chunks without framing the data',
    file: 'lib/stream.js',
    from: '  else writeFramedString(res, socket, data, kind, undefined);\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'queued-end-buffer-entry-dropped',
    what: 'Node 18-22: end() after a tick\'s writes leaves the Buffer chunks out of the queued body it writes',
    file: 'lib/stream.js',
    from: "    parts.push(typeof chunk === 'string' ? Buffer.from(chunk, entry.encoding) : chunk);\n",
    to: "    if (entry instanceof QueuedBytes || typeof chunk === 'string') parts.push(typeof chunk === 'string' ? Buffer.from(chunk, entry.encoding) : chunk);\n",
    suites: ['stream'],
  },
  {
    name: 'queued-end-bytes-data-unframed',
    what: 'Node 18-22: end(Buffer) after a tick\'s writes queues the bytes without their size line and CRLF',
    file: 'lib/stream.js',
    from: '  if (bytes) writeFramed(res, socket, data, data.byteLength, null, undefined);\n',
    to: '  if (bytes) socket.write(data, nop);\n',
    suites: ['stream'],
  },
  {
    name: 'queued-end-utf8-as-latin1',
    what: 'Node 18-22: end() after a tick\'s writes beyond ASCII gives the addon their queued UTF-8 string as latin1',
    file: 'lib/stream.js',
    from: "  args[ARG_BODY_FLAGS] = typeof body === 'string' ? (utf8 ? BODY_UTF8 : BODY_LATIN1) : BODY_BYTES;\n",
    to: "  args[ARG_BODY_FLAGS] = typeof body === 'string' ? BODY_LATIN1 : BODY_BYTES;\n",
    suites: ['stream'],
  },
  {
    name: 'queued-end-utf8-parts-as-latin1',
    what: 'Node 18-22: end() joins a tick\'s UTF-8 string entries beside Buffer chunks as latin1 bytes',
    file: 'lib/stream.js',
    from: "    parts.push(typeof chunk === 'string' ? Buffer.from(chunk, entry.encoding) : chunk);\n",
    to: "    parts.push(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk);\n",
    suites: ['stream'],
  },
  {
    name: 'queued-end-utf8-refused-handed-over',
    what: 'Node 18-22: a tick of UTF-8 strings the kernel took none of is handed over as bytes (writableLength in bytes, a \'drain\' Node never emits) instead of left to Node\'s end()',
    file: 'lib/stream.js',
    from: '  if (utf8 && written === 0 && remaining !== 0) {\n',
    to: '  if (false) {\n',
    suites: ['backpressure'],
  },
  {
    name: 'queued-end-utf8-rest-asks-drain',
    what: 'Node 18-22: the rest of a tick\'s UTF-8 strings handed over as bytes leaves the socket asking for a \'drain\' Node\'s writev() of the tick does not',
    file: 'lib/stream.js',
    from: '  if (utf8 && remaining !== 0) state.needDrain = false;\n',
    to: '',
    suites: ['backpressure'],
  },
  {
    name: 'queued-end-rest-from-copy',
    what: 'Node 18-22: end() after a tick\'s Buffer writes hands what writev(2) left over from its joined copy, where Node\'s writev() sends it from the caller\'s Buffers as they are then',
    file: 'lib/stream.js',
    from: "  const ended = complete(res, written, remaining, parts, typeof callback === 'function' ? callback : undefined);\n",
    to: "  const ended = complete(res, written, remaining, body, typeof callback === 'function' ? callback : undefined);\n",
    suites: ['backpressure'],
  },
  {
    name: 'joined-rest-views-from-start',
    what: 'a partial write of a body joined from parts hands over each part it reaches from the part\'s start, not from where writev(2) stopped',
    file: 'lib/complete.js',
    from: '      const from = Math.max(start - at, 0);\n',
    to: '      const from = 0;\n',
    suites: ['backpressure'],
  },
  {
    name: 'queued-end-units-unchecked',
    what: 'Node 18-22: end() joins a tick\'s entries whose bytes are not their units (a Buffer detached after its write(): Buffer.concat() throws on Node 18 and 20, the response never finishes)',
    file: 'lib/stream.js',
    from: '  if (units !== state.length) return null;\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'queued-end-data-refused-with-data',
    what: 'Node 18-22: end(data) framed into the queue, then refused, calls Node\'s end() with the data again',
    file: 'lib/stream.js',
    from: "  return typeof cb === 'function' ? nodeEnd.call(res, cb) : nodeEnd.call(res);\n}\n",
    to: '  return nodeEnd.call(res, data, encoding, callback);\n}\n',
    suites: ['stream'],
  },
  {
    name: 'stream-moved-bytes-not-copied',
    what: 'a tick\'s entry of bytes moved into a new slab when the slab is full keeps its length but not its bytes',
    file: 'lib/stream.js',
    from: '    from.copy(slab, 0, queued.start, queued.end);\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'stream-large-string-framed',
    what: 'a string chunk of 16 Ki units or more is framed into a copy, as a small one',
    file: 'lib/stream.js',
    from: '  } else if (chunk.length >= FRAMED_STRING_LIMIT) {\n',
    to: '  } else if (chunk.length >= Infinity) {\n',
    suites: ['stream'],
  },
  {
    name: 'stream-large-string-encoding',
    what: 'a large string chunk goes to the socket without its encoding',
    file: 'lib/stream.js',
    from: '  else socket.write(chunk, encoding, nop);\n',
    to: '  else socket.write(chunk, nop);\n',
    suites: ['stream'],
  },
  {
    name: 'write-head-has-body',
    what: 'writeHead() under patchEnd leaves _hasBody as it was (204, 304, 1xx)',
    file: 'lib/write-head.js',
    from: '  res._hasBody = hasBody;\n',
    to: '',
    suites: ['write-head'],
  },
  {
    name: 'write-head-expect',
    what: 'writeHead() under patchEnd keeps alive after an unanswered Expect: 100-continue',
    file: 'lib/write-head.js',
    from: 'res.shouldKeepAlive && !(res._expect_continue && !res._sent100)',
    to: 'res.shouldKeepAlive',
    suites: ['write-head'],
  },
  {
    name: 'write-head-content-length',
    what: "writeHead() under patchEnd ignores `_contentLength` (Node's end() through _implicitHeader())",
    file: 'lib/write-head.js',
    from: 'contentLength === null || contentLength === undefined ? -1 : contentLength;',
    to: '-1;',
    suites: ['write-head'],
  },
  {
    name: 'write-head-header-map',
    what: 'writeHead() under patchEnd renders its argument alone after setHeader()',
    file: 'lib/write-head.js',
    from: '(kOutHeaders !== undefined && res[kOutHeaders] !== null && res[kOutHeaders] !== undefined)',
    to: 'false',
    suites: ['write-head'],
  },
  {
    name: 'write-head-message-type',
    what: 'writeHead() under patchEnd renders a statusMessage that is not a string',
    file: 'lib/write-head.js',
    from: "typeof message !== 'string' || ",
    to: '',
    suites: ['write-head'],
  },
  {
    name: 'write-head-kept-second',
    what: 'writeHead() under patchEnd gives a kept head rendered in an earlier second (its Date field)',
    file: 'lib/write-head.js',
    from: 'if (last.second === second && ',
    to: 'if (',
    suites: ['write-head'],
  },
  {
    name: 'write-head-kept-state',
    what: "writeHead() under patchEnd gives a kept head for another response state (sendDate, keep-alive, ...)",
    file: 'lib/write-head.js',
    from: ' && last.bits === bits && ',
    to: ' && ',
    suites: ['write-head'],
  },
  {
    name: 'write-head-kept-keep-alive',
    what: "writeHead() under patchEnd gives a kept head for another keepAliveTimeout",
    file: 'lib/write-head.js',
    from: ' && last.keepAliveSeconds === keepAliveSeconds &&\n',
    to: ' &&\n',
    suites: ['write-head'],
  },
  {
    name: 'headers-coerced-twice',
    what: 'an object field-value given to writeHead() or send() is rendered by the package (valueOf()), not judged by Node',
    file: 'lib/headers.js',
    from: '    if ((value === undefined || coercedTwice(value)) && strict) return false;\n',
    to: '    if (value === undefined && strict) return false;\n',
    suites: ['write-head'],
  },
  {
    name: 'failed-write-stack-limit',
    what: 'a failed write counts its bytes in socket.bytesWritten whatever Node\'s own write of the response would (one string within 16 KiB of stack storage counts none)',
    file: 'lib/complete.js',
    from: '  return (headJoined === \'latin1\' ? 1 : 3) * (head.length + chunk.length) > STACK_WRITE_LIMIT;\n',
    to: '  return true;\n',
    suites: ['end'],
  },
  {
    name: 'failed-write-no-body',
    what: 'a failed write of a response without a body (HEAD, 204, 304) counts its head in socket.bytesWritten',
    file: 'lib/complete.js',
    from: '  if (!res._hasBody) return typeof head === \'string\' && head.length > STACK_WRITE_LIMIT;\n',
    to: '  if (!res._hasBody) return true;\n',
    suites: ['end'],
  },
  {
    name: 'prototype-attributes',
    what: 'install() defines its methods non-enumerable over the prototype\'s own (V8 then holds ServerResponse.prototype as a dictionary)',
    file: 'lib/node-internals.js',
    from: '    enumerable: own !== undefined && \'value\' in own ? own.enumerable : false,\n',
    to: '    enumerable: false,\n',
    suites: ['install'],
  },
  // install() and uninstall() beside someone else's wrapper (an APM agent).
  {
    name: 'end-patch-ignores-own-wrapper',
    what: 'install({ patchEnd: true }) stands over the inherited end(), not a wrapper on ServerResponse.prototype (an APM agent loaded before, or after install())',
    file: 'lib/node-internals.js',
    from: '  let beneath = descriptor !== undefined ? proto.end : null;\n',
    to: '  let beneath = null;\n',
    suites: ['wrappers'],
  },
  {
    name: 'end-patch-fixes-inherited',
    what: "the patched end() takes Node's end() for the inherited one (a wrapper put on OutgoingMessage.prototype after install() is skipped)",
    file: 'lib/node-internals.js',
    from: '    const below = beneath === null ? parent.end : beneath;\n',
    to: '    const below = beneath === null ? nodeEnd : beneath;\n',
    suites: ['wrappers'],
  },
  {
    name: 'retired-end-stays-fast',
    what: "the package's end() left under a wrapper by uninstall() keeps taking the fast path",
    file: 'lib/node-internals.js',
    from: '    if (below === nodeEnd && active && nodeEnd !== null) return fast(this, data, encoding, callback);\n',
    to: '    if (below === nodeEnd && nodeEnd !== null) return fast(this, data, encoding, callback);\n',
    suites: ['wrappers'],
  },
  {
    name: 'retired-end-not-looked-through',
    what: "a later install({ patchEnd: true }) takes the package's retired end() for someone's wrapper (the fast path off for good)",
    file: 'lib/node-internals.js',
    from: '    ({ beneath, descriptor } = retired);\n',
    to: '    break;\n',
    suites: ['wrappers'],
  },
  {
    name: 'uninstall-drops-later-wrapper',
    what: 'uninstall() puts back end() over a wrapper added after install({ patchEnd: true })',
    file: 'lib/index.js',
    from: "    if (proto.end === installed.endPatch.method) restoreProperty(proto, 'end', installed.endPatch.descriptor);\n",
    to: "    restoreProperty(proto, 'end', installed.endPatch.descriptor);\n",
    suites: ['wrappers'],
  },
  {
    name: 'retired-write-stays-fast',
    what: "the package's write() left under a wrapper by uninstall() keeps framing chunks (Node 18 to 22)",
    file: 'lib/index.js',
    from: '  if (below !== nodeWrite || installed === null) return callOwn(below, this, chunk, encoding, callback);\n',
    to: '  if (below !== nodeWrite) return callOwn(below, this, chunk, encoding, callback);\n',
    suites: ['wrappers'],
  },
  {
    name: 'template-checks-through-wrapper',
    what: "template() judges its arguments with the response's writeHead() and _storeHeader() (a wrapper sees a response no server made)",
    file: 'lib/node-internals.js',
    from: '    res._storeHeader = nodeStoreHeader;\n    nodeWriteHead.call(res, statusCode, headers);\n',
    to: '    res.writeHead(statusCode, headers);\n',
    suites: ['loading', 'wrappers'],
  },
  {
    name: 'probe-head-through-wrapper',
    what: "the load-time probe of Content-Length stores its head with the response's writeHead()",
    file: 'lib/node-internals.js',
    from: "  nodeStoreHeader.call(res, 'HTTP/1.1 200 OK\\r\\n', { 'Content-Length': '0' });\n",
    to: "  res.writeHead(200, { 'Content-Length': '0' });\n",
    suites: ['loading'],
  },
  {
    name: 'orphan-method-descriptor-kept',
    what: "an install() that finds the package's write()/writeHead()/uncork() put back keeps it at uninstall()",
    file: 'lib/index.js',
    from: '  if (proto[name] === method) installed[name] = replacedDescriptors[name];\n  else replacedDescriptors[name] = installed[name];\n',
    to: '  if (proto[name] !== method) replacedDescriptors[name] = installed[name];\n',
    suites: ['wrappers'],
  },
  {
    name: 'store-header-wrapper-missed',
    what: "end() and send() render the head natively under a replaced _storeHeader() (an agent's)",
    file: 'lib/node-internals.js',
    from: ' &&\n    res._storeHeader === nodeStoreHeader;\n',
    to: ';\n',
    suites: ['wrappers'],
  },
  {
    name: 'collected-callbacks-dropped',
    what: "the write() callbacks of chunks the addon wrote (Node 24+: a tick's collected chunks) are never called",
    file: 'lib/complete.js',
    from: '  } else if (sent !== undefined) {\n    process.nextTick(sent, null);\n  }\n',
    to: '  }\n',
    suites: ['stream'],
  },
  {
    name: 'collected-callbacks-after-none-dropped',
    what: "a tick's collected write() callbacks are dropped when the tick's first write gave none (Node 24+: no callback goes to the socket where no write gave one)",
    file: 'lib/chunked-buffer.js',
    from: '    if (buf[i] !== NODE_WRITE_NOP) return false;\n',
    to: '    if (buf[i] !== NODE_WRITE_NOP) return false;\n    break;\n',
    suites: ['stream'],
  },
  {
    name: 'collected-buffer-encoding-unchecked',
    what: "a collected Buffer with an encoding the socket's write() throws for is written by the addon (Node 24+)",
    file: 'lib/chunked-buffer.js',
    from: "      if (encoding && encoding !== 'buffer' && !Buffer.isEncoding(encoding)) return false;\n",
    to: '',
    suites: ['stream'],
  },
  {
    name: 'tick-write-ends-body',
    what: "each tick's collected chunk written by the addon (Node 24+) is followed by the last chunk",
    file: 'src/addon.cc',
    from: '(body_flags & kChunked) != 0 ? kChunkEnd : kChunkDataEnd',
    to: 'kChunkEnd',
    suites: ['stream'],
  },
  {
    name: 'tick-joined-pairing-surrogates',
    what: "a tick's collected UTF-8 strings joined into one string before the addon writes them (Node 24+) though a high surrogate ends one and a low one starts the next: the pair written apart is paired",
    file: 'lib/chunked-buffer.js',
    from: '  const joined = bufferBytes === 0 && !pairs;\n',
    to: '  const joined = bufferBytes === 0;\n',
    suites: ['stream'],
  },
  {
    name: 'tick-joined-without-buffers',
    what: "a tick's collected strings joined for the addon's write though a Buffer is among them (Node 24+): the Buffer's bytes are left out",
    file: 'lib/chunked-buffer.js',
    from: '  const joined = bufferBytes === 0 && !pairs;\n',
    to: '  const joined = !pairs;\n',
    suites: ['stream'],
  },
  {
    name: 'tick-joined-utf8-as-latin1',
    what: "the addon writes a tick's joined strings (Node 24+) as latin1 where they are UTF-8 beyond ASCII",
    file: 'src/addon.cc',
    from: '          return utf8 ? AppendBeyondAscii(env, data, units, cork)\n',
    to: '          return false ? AppendBeyondAscii(env, data, units, cork)\n',
    suites: ['stream'],
  },
  {
    name: 'tick-joined-as-utf8',
    what: "the addon writes a tick's joined strings (Node 24+) as UTF-8, not latin1",
    file: 'src/addon.cc',
    from: '                      : AppendString(env, data, false, units, cork);\n',
    to: '                      : AppendString(env, data, true, units, cork);\n',
    suites: ['stream'],
  },
  {
    name: 'tick-refused-handed-over',
    what: "a tick's chunk the kernel took none of (Node 24+) handed to socket.write() as the addon's bytes, not left to Node's sends: writableLength counts bytes, not Node's units",
    file: 'lib/chunked-buffer.js',
    from: '  if (results[RESULT_WRITTEN] !== 0 || results[RESULT_REMAINING] === 0) return false;\n',
    to: '  return false;\n',
    suites: ['stream'],
  },
  {
    name: 'tick-utf8-encoded-past-limit',
    what: "a tick's UTF-8 strings beyond ASCII written entry by entry (Node 24+) encoded by the addon however long (slower than Node's socket past 512 units a string)",
    file: 'lib/chunked-buffer.js',
    from: '  if (!latin1 && !joined && units > MAX_ENCODED_UNITS_PER_ENTRY * strings) return false;\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'tick-encoded-unflagged',
    what: "a tick's joined UTF-8 past 512 units (Node 24+) given to the addon as Node's bytes without BODY_ENCODED (read as a string)",
    file: 'lib/chunked-buffer.js',
    from: ' | (encoded ? BODY_ENCODED : 0);\n',
    to: ';\n',
    suites: ['stream'],
  },
  {
    name: 'body-encoded-cut',
    what: "a UTF-8 body the JavaScript gave encoded (BODY_ENCODED, Node 24+) copied without its last byte",
    file: 'src/addon.cc',
    from: '    cork->AppendRaw(bytes, length);\n',
    to: '    cork->AppendRaw(bytes, length - 1);\n',
    suites: ['end'],
  },
  {
    name: 'body-encoded-unsent-length',
    what: "HEAD with a UTF-8 body given encoded: `_contentLength` read from the Buffer as if it were the string (0)",
    file: 'src/addon.cc',
    from: '        if ((body_flags & kBodyEncoded) != 0) {\n          const uint8_t* bytes = nullptr;\n          return',
    to: '        if (false) {\n          const uint8_t* bytes = nullptr;\n          return',
    suites: ['end'],
  },
  {
    name: 'body-encoded-unflagged',
    what: 'a UTF-8 body given to the addon as its bytes without BODY_ENCODED (read as a string)',
    file: 'lib/body.js',
    from: '    args[ARG_BODY_FLAGS] = flags | BODY_ENCODED;\n',
    to: '    args[ARG_BODY_FLAGS] = flags;\n',
    suites: ['end'],
  },
  {
    name: 'utf8-lone-surrogate-kept',
    what: "the addon's UTF-8 encoder (src/utf8.cc) writes a lone surrogate as its own three bytes, not as U+FFFD as Node's socket writes it",
    file: 'src/utf8.cc',
    from: '      const uint32_t cp = IsHighSurrogate(c) || IsLowSurrogate(c) ? 0xFFFD : c;\n',
    to: '      const uint32_t cp = c;\n',
    suites: ['stream'],
  },
  {
    name: 'queued-end-past-callback',
    what: "Node 18-22: end() writes the tick's queued entry with the last chunk although a write() gave it a callback (the callback is never called)",
    file: 'lib/stream.js',
    from: '    if (entry.callback !== nop) return null;\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'queued-end-without-last-chunk',
    what: "Node 18-22: end() after a tick's writes of small chunks sends their queued string without the last chunk",
    file: 'lib/stream.js',
    from: "      if (typeof entry.chunk === 'string') return entry.chunk + LAST_CHUNK;\n",
    to: "      if (typeof entry.chunk === 'string') return entry.chunk;\n",
    suites: ['stream'],
  },
  {
    name: 'queued-end-length-kept',
    what: "Node 18-22: the entry end() wrote natively stays counted in the socket's writableLength",
    file: 'lib/stream.js',
    from: '  state.length -= units;\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'queued-end-while-draining',
    what: "Node 18-22: end() writes the tick's queued entry natively after a write() asked for 'drain' (Node's write emits it)",
    file: 'lib/stream.js',
    from: '  if (res[kNeedDrain] || state.needDrain || state.length + LAST_CHUNK.length >= state.highWaterMark) return null;\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'queued-end-last-chunk-past-hwm',
    what: "Node 18-22: end() writes the tick's queued chunks natively where Node's last chunk would bring the socket to its highWaterMark ('drain', the server's pause of a pipelining connection lost)",
    file: 'lib/stream.js',
    from: '  if (res[kNeedDrain] || state.needDrain || state.length + LAST_CHUNK.length >= state.highWaterMark) return null;\n',
    to: '  if (res[kNeedDrain] || state.needDrain) return null;\n',
    suites: ['stream'],
  },
  {
    name: 'queued-end-split-last-only',
    what: "Node 18-22: end() after a tick whose entry split where the slab filled writes only the last part with the last chunk",
    file: 'lib/stream.js',
    from: '  for (let i = from; i < buffered.length; i++) {\n    const entry = buffered[i];\n    const chunk = entry.chunk;\n',
    to: '  for (let i = buffered.length - 1; i < buffered.length; i++) {\n    const entry = buffered[i];\n    const chunk = entry.chunk;\n',
    suites: ['stream'],
  },
  {
    name: 'tick-written-past-empty-write',
    what: "the addon writes a tick's collected chunks (Node 24+) while an empty write() waits in the socket's buffer: its callback comes after theirs and after 'finish'",
    file: 'lib/socket-fd.js',
    from: '  if (ownCorks !== 0 && bufferedWrites(socket._writableState)) return R.SOCKET_BUSY;\n',
    to: '',
    suites: ['stream'],
  },
  {
    name: 'replaced-called-back-recurses',
    what: 'a replaced end() or write() that calls fastEnd() / fastWrite() back is called again by it (the stack overflows)',
    file: 'lib/node-internals.js',
    from: '  if (running !== undefined) return methodBeneath(msg, name, running);\n',
    to: '',
    suites: ['install'],
  },
  {
    name: 'failed-lone-write-uncounted',
    what: "a streamed chunk written alone that fails at once adds nothing to socket.bytesWritten, where Node's writev() of it counts (Node 18-22)",
    file: 'lib/stream.js',
    from: '    countBytes(handle, Buffer.byteLength(lone.chunk, lone.encoding));\n',
    to: '',
    suites: ['peer-faults'],
  },
  {
    name: 'masked-source-trusted',
    what: "Node's own methods told by the running realm's Function.prototype.toString (an agent masks its wrappers' source)",
    file: 'lib/node-internals.js',
    from: "let functionSource = require('node:vm').runInNewContext('Function.prototype.toString');",
    to: 'let functionSource = Function.prototype.toString;',
    suites: ['loading'],
  },
  // lib/pipeline.js: the socket's batch of pipelined responses.
  {
    name: 'pipeline-order-unchecked',
    what: 'a queued response joins its socket\'s batch whatever its request\'s place (one ended before its predecessor goes first)',
    file: 'lib/pipeline.js',
    from: '  if (writer === false || writer.closed || req[kNumber] !== writer.last + 1) return null;\n',
    to: '  if (writer === false || writer.closed || req[kNumber] === undefined) return null;\n',
    suites: ['pipeline'],
  },
  {
    name: 'pipeline-closed-ignored',
    what: 'responses after one that closes the connection (a handler\'s Connection: close) join the batch: written where Node writes nothing',
    file: 'lib/pipeline.js',
    from: '  if (writer === false || writer.closed || req[kNumber] !== writer.last + 1) return null;\n',
    to: '  if (writer === false || req[kNumber] !== writer.last + 1) return null;\n',
    suites: ['pipeline'],
  },
  {
    name: 'pipeline-first-burst-unbatched',
    what: "a new writer's first numbered request may not start the batch: a connection's first burst goes Node's way",
    file: 'lib/pipeline.js',
    from: '    this.last = 0;\n',
    to: '    this.last = -1;\n',
    suites: ['pipeline'],
  },
  {
    name: 'tls-written-plain',
    what: "socketRefusal() lets a TLS socket through: the addon writes its responses (the current one, a batch at its turn) to the TCP connection's descriptor in plaintext",
    file: 'lib/socket-fd.js',
    from: '  if (socket.encrypted) return R.TLS;\n',
    to: '',
    suites: ['pipeline'],
  },
  {
    name: 'pipeline-ahead-of-destroyed',
    what: 'the batch written ahead of a queued response the handler destroyed after end(): Node never writes it or the ones after it',
    file: 'lib/pipeline.js',
    from: '    const writeAhead = need > 0 && !res.destroyed && !destroyedWaiting(waiting);\n',
    to: '    const writeAhead = need > 0 && !res.destroyed;\n',
    suites: ['pipeline'],
  },
  {
    name: 'pipeline-destroyed-turn-ahead',
    what: "a destroyed response's turn writes the batch after it (Node 24 and later write it, then stop when it was destroyed with an error)",
    file: 'lib/pipeline.js',
    from: '    const writeAhead = need > 0 && !res.destroyed && !destroyedWaiting(waiting);\n',
    to: '    const writeAhead = need > 0 && !destroyedWaiting(waiting);\n',
    suites: ['pipeline'],
  },
  {
    name: 'pipeline-turn-finish-early',
    what: "a batched response's 'finish' callback called at its turn before its bytes were counted and written",
    file: 'lib/pipeline.js',
    from: '    if (counted > 0) countBytes(handle, counted);\n    if (need === 0) {\n',
    to: '    callback();\n    if (counted > 0) countBytes(handle, counted);\n    if (need === 0) {\n',
    suites: ['pipeline'],
  },
];

function copyInto(dir) {
  for (const entry of COPY) {
    fs.cpSync(path.join(root, entry), path.join(dir, entry), { recursive: true });
  }
}

function sh(cmd, cmdArgs, cwd, extraEnv = {}) {
  const env = { ...process.env, ...extraEnv };
  delete env.FAST_RESPONSE_ADDON;
  delete env.NODE_TEST_CONTEXT;
  return spawnSync(cmd, cmdArgs, {
    cwd, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, timeout: RUN_TIMEOUT_MS, killSignal: 'SIGKILL',
  });
}

function build(dir) {
  const r = sh('npm', ['run', 'rebuild'], dir);
  if (r.status !== 0) {
    process.stderr.write(r.stdout.slice(-4000) + r.stderr.slice(-4000));
    return false;
  }
  return true;
}

/** 'passed', 'FAILED' (a test failed) or 'timeout'. */
function runSuite(dir, suite) {
  // The file runs in the process spawnSync() starts (node:test runs a file
  // given without --test in-process), so that RUN_TIMEOUT_MS kills what
  // hangs: under --test the runner's child for the file keeps the output
  // pipe open after the runner is killed, and spawnSync() waited for it
  // (a mutant that left a client waiting held a run for 8 minutes).
  const r = sh(process.execPath, ['--test-reporter=tap', SUITES[suite]], dir, {
    FAST_RESPONSE_TEST_BAIL: '1',
    FAST_RESPONSE_TEST_TIMEOUT_MS: '15000',
  });
  if (r.error && r.error.code === 'ETIMEDOUT') return { result: 'timeout', detail: '' };
  const fail = /^# fail (\d+)/m.exec(r.stdout);
  const pass = /^# pass (\d+)/m.exec(r.stdout);
  const passed = r.status === 0 && fail !== null && Number(fail[1]) === 0 && pass !== null && Number(pass[1]) > 0;
  const firstFailure = (r.stdout.match(/^not ok \d+ - .*$/m) ||
                        r.stdout.match(/^\s+not ok \d+ - .*$/m) || [''])[0].trim();
  return {
    result: passed ? 'passed' : 'FAILED',
    detail: passed ? '' : firstFailure,
    output: r.stdout + r.stderr,
  };
}

/** The first failure's message in a TAP output, shortened. */
function firstError(output) {
  const lines = (output || '').split('\n');
  const at = lines.findIndex((l) => /^\s*error: /.test(l) && !/not run after/.test(l));
  return at === -1 ? '' : lines.slice(at, at + 12).join('\n').slice(0, 3000);
}

// Applies one edit (and its `also`, a second edit in the same file).
function applyMutant(dir, m) {
  const text = mutated(fs.readFileSync(path.join(dir, m.file), 'utf8'), m);
  if (text === null) return false;
  fs.writeFileSync(path.join(dir, m.file), text);
  return true;
}

// `text` with the mutant's edits, or null where one does not apply (its
// text is not there, or not once unless the mutant edits `all`).
function mutated(text, m) {
  let out = text;
  for (const edit of m.also ? [m, m.also] : [m]) {
    const count = out.split(edit.from).length - 1;
    if (count === 0 || (!m.all && count !== 1)) return null;
    out = m.all ? out.split(edit.from).join(edit.to) : out.replace(edit.from, () => edit.to);
  }
  return out;
}

// --applies: the mutants whose edit no longer applies to this repository's sources.
function checkApplies() {
  const stale = MUTANTS.filter((m) => mutated(fs.readFileSync(path.join(root, m.file), 'utf8'), m) === null);
  for (const m of stale) console.error(`mutant ${m.name}: its text is not found once in ${m.file} (update the mutant)`);
  console.log(`mutation check: ${MUTANTS.length - stale.length} of ${MUTANTS.length} mutants apply`);
  return stale.length === 0 ? 0 : 1;
}

function restore(dir, m) {
  fs.copyFileSync(path.join(dir, '.pristine', m.file), path.join(dir, m.file));
}

function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-response-mutation-'));
  const started = Date.now();
  try {
    copyInto(dir);
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    fs.mkdirSync(path.join(dir, '.pristine'));
    for (const entry of ['lib', 'src']) {
      fs.cpSync(path.join(dir, entry), path.join(dir, '.pristine', entry), { recursive: true });
    }
    console.log(`copy: ${dir}`);
    if (!build(dir)) {
      console.error('the unmutated copy does not build');
      return 2;
    }
    const addon = path.join(dir, 'build', 'Release', 'fast_response.node');
    const pristineAddon = path.join(dir, '.pristine', 'fast_response.node');
    fs.copyFileSync(addon, pristineAddon);

    for (const suite of Object.keys(SUITES)) {
      const r = runSuite(dir, suite);
      console.log(`baseline ${suite}: ${r.result} ${r.detail}`);
      if (r.result !== 'passed') {
        console.error((r.output || '').split('\n').filter((l) => !/^\s+(at |async )/.test(l))
          .slice(-80).join('\n'));
        console.error('the unmutated copy fails: fix that first');
        return 2;
      }
    }

    const rows = [];
    for (const m of MUTANTS) {
      if (only !== null && !only.has(m.name)) continue;
      const t0 = Date.now();
      const native = m.file.startsWith('src/');
      const row = { name: m.name, what: m.what, killedBy: '-', killed: 'no', note: '' };
      rows.push(row);
      if (!applyMutant(dir, m)) {
        row.killed = 'NOT APPLIED';
        row.note = `text not found once in ${m.file}`;
        console.log(`${m.name}: NOT APPLIED`);
        continue;
      }
      try {
        if (native && !build(dir)) {
          row.killed = 'BUILD FAILED';
          continue;
        }
        // The suites in order until one fails: that one killed the mutant.
        row.killed = 'NO';
        for (const suite of m.suites || Object.keys(SUITES)) {
          const r = runSuite(dir, suite);
          if (r.result === 'passed') continue;
          row.killed = 'yes';
          row.killedBy = r.result === 'timeout' ? `${suite} (timeout)` : suite;
          row.note = r.detail;
          if (verbose) console.log(`${suite}:\n${firstError(r.output)}`);
          break;
        }
      } finally {
        restore(dir, m);
        if (native) fs.copyFileSync(pristineAddon, addon);
      }
      console.log(`${m.name}: killed ${row.killed} (by ${row.killedBy}: ${row.note}) ` +
        `${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }

    console.log('\n| mutant | edit | killed by | killed |');
    console.log('|---|---|---|---|');
    for (const r of rows) {
      console.log(`| ${r.name} | ${r.what} | ${r.killedBy} | ${r.killed} |`);
    }
    const bad = rows.filter((r) => r.killed !== 'yes');
    console.log(`\n${rows.length - bad.length} of ${rows.length} mutants killed ` +
      `(${((Date.now() - started) / 1000).toFixed(0)} s)`);
    for (const r of bad) console.log(`  ${r.name}: ${r.killed} ${r.note}`);
    return bad.length === 0 ? 0 : 1;
  } finally {
    if (keep) console.log(`kept ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = appliesOnly ? checkApplies() : main();
