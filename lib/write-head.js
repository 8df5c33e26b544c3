'use strict';

// res.writeHead(statusCode[, statusMessage][, headers]) under
// install({ patchEnd: true }) (and register): the head rendered by
// src/head.cc instead of _storeHeader(), where Node's writeHead() would
// hand its `headers` argument to _storeHeader() as they are (no setHeader()
// map to merge into). The head is only rendered, as Node renders it: it
// leaves with the response's end() or first write(), which the package or
// Node sends as always. Node's _implicitHeader() calls writeHead() too, so
// a head Node's own end() or write() renders comes here as well.
//
// Why: a handler that calls writeHead() and then end() or write() (every
// benchmark shape of the pipelined and streamed cases, Fastify's replies)
// spent a part of what the package left of a response in _storeHeader()
// (README, "res.writeHead() under patchEnd": about 1.5 % of the
// instructions per response, measured). The same inputs within the same
// second give the same head: the last one is kept (renderHead()), and a
// handler that answers with the same status and fields does not cross into
// C++ to render it, only to read the clock's second (6.6 % of the
// instructions per response at pipelined depth 16).
//
// Node's writeHead() is called instead, with the same arguments and before
// anything of the response changed except what it sets itself first
// (statusCode, statusMessage), wherever this would differ from it: a head
// already rendered (ERR_HTTP_HEADERS_SENT), setHeader() fields to merge, a
// status code that is not a number in 100..999, a header argument Node
// judges itself (lib/headers.js joinHeaders(): an undefined value, an
// object, function or Symbol value, whose check and rendering convert it
// differently), a header argument whose reading throws, a statusMessage
// that is not a string, chunkedEncoding already true, a field or reason
// phrase the addon finds invalid (Node throws its own error), the fields the
// addon steps aside for (Transfer-Encoding, Trailer, Expect, a non-ASCII
// Content-Disposition), a replaced _storeHeader(), Node 18 (whose head rules
// differ) and no addon.

const { binding, layout, args, results } = require('./binding');
const { SEP, joinHeaders } = require('./headers');
const {
  STATUS_CODES, nodeWriteHead, nodeStoreHeader, kOutHeaders, uniqueHeadersOf, NODE_RENDERS_HEAD,
  REMOVED_CONNECTION_KEEPS_ALIVE,
} = require('./node-internals');
const { applyHead } = require('./complete');
const { stateBits, statusHasBody, setKeepAliveArgs } = require('./gate');
const { countHead } = require('./stats');

const {
  ARG_STATUS_CODE, ARG_FIELD_COUNT, ARG_STATE_BITS, ARG_BODY_BYTES, ARG_KEEP_ALIVE_SECONDS, ARG_MAX_REQUESTS,
  RESULT_BITS, RESULT_CONTENT_LENGTH, RESULT_REASON, HAS_BODY, SHOULD_KEEP_ALIVE,
} = layout;

/** Whether this Node's writeHead() can be rendered here at all. */
const RENDERS_HEADS = binding !== null && !NODE_RENDERS_HEAD && nodeWriteHead !== null && nodeStoreHeader !== null;

/**
 * Node's `res.writeHead(statusCode[, statusMessage][, headers])`, the head
 * rendered natively where Node's would take `headers` as they are.
 *
 * @param {import('http').ServerResponse} res
 * @param {number} statusCode 100-999.
 * @param {string|object|Array|null} [reason] The reason phrase, or the
 *   headers.
 * @param {object|Array|null} [obj] The headers: a plain object or a flat
 *   array, as Node's writeHead() takes them.
 * @returns {import('http').ServerResponse} `res`, as Node's writeHead().
 * @throws What Node's writeHead() throws (ERR_HTTP_HEADERS_SENT,
 *   ERR_HTTP_INVALID_STATUS_CODE, ERR_INVALID_CHAR, ERR_INVALID_HTTP_TOKEN,
 *   ERR_HTTP_INVALID_HEADER_VALUE, ERR_INVALID_ARG_VALUE): such calls are
 *   Node's own.
 */
function writeHead(res, statusCode, reason, obj) {
  // A chunkedEncoding already true changes _storeHeader()'s rules for 204
  // and 304: Node's.
  if (!RENDERS_HEADS || res._header || typeof statusCode !== 'number' || res._storeHeader !== nodeStoreHeader ||
      (kOutHeaders !== undefined && res[kOutHeaders] !== null && res[kOutHeaders] !== undefined) ||
      res.chunkedEncoding) {
    return nodeWriteHead.call(res, statusCode, reason, obj);
  }
  const code = statusCode | 0;
  if (code < 100 || code > 999) return nodeWriteHead.call(res, statusCode, reason, obj);
  // What Node's writeHead() sets before it reads the headers or validates
  // anything: so set when a getter of the headers throws, as in Node.
  if (typeof reason === 'string') res.statusMessage = reason;
  else if (!res.statusMessage) res.statusMessage = STATUS_CODES[code] || 'unknown';
  res.statusCode = code;
  const message = res.statusMessage;
  const headers = typeof reason === 'string' ? obj : (obj ?? reason);
  let flat;
  try {
    flat = joinHeaders(headers);
  } catch {
    // A getter or a conversion threw: Node reads them again and throws
    // where it throws (after its own checks).
    flat = null;
  }
  // _storeHeader() turns a Content-Disposition value into latin1 bytes when
  // `_contentLength` is set (end(data) through _implicitHeader(), with
  // fields only when they come as an argument): Node's. A reason phrase
  // that is not a string is converted in two ways there (the check and
  // the status line): Node's.
  const contentLength = res._contentLength;
  if (flat === null || typeof message !== 'string' || (flat.arrays && uniqueHeadersOf(res)) ||
      (contentLength !== null && contentLength !== undefined &&
       (flat.count !== 0 || !Number.isSafeInteger(contentLength) || contentLength < 0)) ||
      (res._removedConnection && !REMOVED_CONNECTION_KEEPS_ALIVE)) {
    return nodeWriteHead.call(res, statusCode, reason, obj);
  }
  if (!setKeepAliveArgs(res)) return nodeWriteHead.call(res, statusCode, reason, obj);
  // What it sets after the reason phrase passed, before _storeHeader():
  // given to the addon, set on the response only when the head is rendered.
  const hasBody = res._hasBody && statusHasBody(code);
  const keepAlive = res.shouldKeepAlive && !(res._expect_continue && !res._sent100);
  let bits = stateBits(res) & ~(HAS_BODY | SHOULD_KEEP_ALIVE);
  if (hasBody) bits |= HAS_BODY;
  if (keepAlive) bits |= SHOULD_KEEP_ALIVE;
  const bodyBytes = contentLength === null || contentLength === undefined ? -1 : contentLength;
  const header = renderHead(code, message, flat, bits, bodyBytes);
  if (header === undefined) return nodeWriteHead.call(res, statusCode, reason, obj);
  res._hasBody = hasBody;
  applyHead(res, header, flat.joined, undefined);
  res._headerSent = false;
  countHead();
  return res;
}

/**
 * The last head the addon rendered here, and everything it was rendered
 * from: the addon's renderResponse() is a function of these alone (the
 * status code, the reason phrase, the joined fields and their count, the
 * state bits, the keep-alive arguments, `_contentLength`) and of the clock's
 * second (the Date field). A handler that answers every request with the
 * same status and fields (the pipelined and streamed benchmark shapes,
 * Fastify's replies) gets the same head as the response before it within a
 * second: it is taken from here, as a string and the results the addon
 * reported with it, without the addon's rendering (pipelined depth 16,
 * 64 B, Node 20: 3,280 of the 33,700 instructions per response were the
 * call and the rendering; reading the clock costs a few hundred). One per
 * environment: this module's scope.
 */
const lastHead = {
  second: -1,
  code: 0,
  message: '',
  joined: '',
  count: 0,
  bits: 0,
  keepAliveSeconds: 0,
  maxRequests: 0,
  bodyBytes: 0,
  header: '',
  resultBits: 0,
  resultContentLength: 0,
  resultReason: 0,
};

/**
 * The second of the clock src/head.cc's Date field reads, from the addon: a
 * test's fake timers replace Date.now (also before the package loads, and
 * with an offset), not that clock, and Node's own Date field does not
 * follow them either (a new-user check found a Date.now captured at load
 * frozen by fake timers installed first).
 */
function clockSecond() {
  return binding.clockSecond();
}

/**
 * The head renderResponse() renders from these (args[ARG_KEEP_ALIVE_SECONDS]
 * and args[ARG_MAX_REQUESTS] set by the caller), with results[RESULT_BITS],
 * results[RESULT_CONTENT_LENGTH] and results[RESULT_REASON] as it reports
 * them; or undefined (nothing kept). The same inputs within the same clock
 * second give the kept head.
 */
function renderHead(code, message, flat, bits, bodyBytes) {
  const second = clockSecond();
  const last = lastHead;
  const keepAliveSeconds = args[ARG_KEEP_ALIVE_SECONDS];
  const maxRequests = args[ARG_MAX_REQUESTS];
  if (last.second === second && last.code === code && last.bits === bits && last.count === flat.count &&
      last.bodyBytes === bodyBytes && last.keepAliveSeconds === keepAliveSeconds &&
      last.maxRequests === maxRequests && last.message === message && last.joined === flat.joined) {
    results[RESULT_BITS] = last.resultBits;
    results[RESULT_CONTENT_LENGTH] = last.resultContentLength;
    results[RESULT_REASON] = last.resultReason;
    return last.header;
  }
  args[ARG_STATUS_CODE] = code;
  args[ARG_FIELD_COUNT] = flat.count;
  args[ARG_STATE_BITS] = bits;
  args[ARG_BODY_BYTES] = bodyBytes;
  const header = binding.renderResponse(message + SEP + flat.joined);
  // Kept only when the clock read the same second before and after: the
  // addon's Date field is then of that second.
  if (header !== undefined && clockSecond() === second) {
    last.second = second;
    last.code = code;
    last.message = message;
    last.joined = flat.joined;
    last.count = flat.count;
    last.bits = bits;
    last.keepAliveSeconds = keepAliveSeconds;
    last.maxRequests = maxRequests;
    last.bodyBytes = bodyBytes;
    last.header = header;
    last.resultBits = results[RESULT_BITS];
    last.resultContentLength = results[RESULT_CONTENT_LENGTH];
    last.resultReason = results[RESULT_REASON];
  }
  return header;
}

module.exports = { writeHead, RENDERS_HEADS };
