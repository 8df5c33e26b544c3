'use strict';

// send(), template() and json(): status, header fields and body in one call,
// the head validated and rendered by src/head.cc without Node's per-response
// header map.

const {
  ServerResponse,
  STATUS_CODES,
  nodeEnd,
  isNodesHead,
  isNodesEnd,
  kOutHeaders,
  uniqueHeadersOf,
  throwLikeWriteHead,
  NODE_RENDERS_HEAD,
} = require('./node-internals');
const { binding, layout, results } = require('./binding');
const { end, endAfterNodeHead } = require('./end');
const { sendBodyKind } = require('./body');
const { FROM_FIELDS, FROM_TEMPLATE, writeDirect, statusHasBody } = require('./gate');
const { contentLengthOf } = require('./complete');
const { countFallback } = require('./stats');
const { R } = require('./reasons');
const {
  SEP, hasHeaderNamed, withHeader, copyHeaders, joinHeaders,
} = require('./headers');

const {
  RESULT_BITS, RESULT_REASON, RESULT_CONTENT_LENGTH_FIELD, STEP_ASIDE_NAMES,
} = layout;

const FRAMING_FIELDS = ['content-length', 'transfer-encoding'];

/**
 * `headers` plus `Content-Length: <byte length of data>` after the given
 * fields, where the response has a body and neither the headers nor the
 * response's own header map say how the body is framed. Malformed headers
 * are returned as they are, so that writeHead() throws its own error.
 */
function withContentLength(res, statusCode, headers, data) {
  if (!res._hasBody || !statusHasBody(statusCode | 0)) return headers;
  let length;
  if (data === undefined || data === null || data === '') length = 0;
  else if (typeof data === 'string') length = Buffer.byteLength(data);
  else if (data instanceof Uint8Array) length = data.byteLength;
  else return headers;
  if (hasHeaderNamed(headers, FRAMING_FIELDS)) return headers;
  if (typeof res.hasHeader === 'function' &&
      (res.hasHeader('content-length') || res.hasHeader('transfer-encoding'))) {
    return headers;
  }
  return withHeader(headers, 'Content-Length', length, false);
}

/** Node's own path for send(): writeHead() with Content-Length, then end(). */
// The call is counted under `reason` once; when the body still goes out
// through the addon after Node rendered the head, it counts as fast too.
function sendWithNode(res, statusCode, headers, data, reason) {
  // Node 18 (NODE_RENDERS_HEAD): Node renders every head; that is the
  // mode, not a fallback, and end() counts what happens to the body.
  if (reason !== undefined) countFallback(reason, res, data);
  res.writeHead(statusCode, withContentLength(res, statusCode, headers, data));
  const own = res.end;
  if (!isNodesEnd(own) && typeof own === 'function') return own.call(res, data);
  if (data === undefined || data === null || data === '') return nodeEnd.call(res);
  return reason === undefined ? end(res, data) : endAfterNodeHead(res, data);
}

/**
 * send() is what calling the response's own writeHead() and end() does:
 * where they are not Node's (replaced on the instance by on-headers,
 * compression middleware, ...; another kind of response, such as the HTTP/2
 * compatibility API's), they must be called. Returns that reason, or null;
 * undefined on Node 18, where Node renders every head.
 */
function ownMethods(res) {
  if (NODE_RENDERS_HEAD) return undefined;
  if (!(res instanceof ServerResponse)) return R.NOT_HTTP1;
  if (!isNodesEnd(res.end)) return R.END_REPLACED;
  if (!isNodesHead(res)) return R.WRITEHEAD_REPLACED;
  return null;
}

/** Whether writeHead() would throw or merge: a head rendered, or setHeader() used. */
function headStarted(res) {
  if (res._header) return R.HEAD_RENDERED;
  if (kOutHeaders !== undefined && res[kOutHeaders] !== null) return R.HEADER_MAP;
  return null;
}

/**
 * Sends a whole response: what `res.writeHead(statusCode, headers)` followed
 * by `res.end(data)` does, with `Content-Length` added after the given fields
 * when the response may have a body (not HEAD, 204 or 304) and `headers`
 * names neither Content-Length nor Transfer-Encoding (`Content-Length: 0`
 * without `data`, as res.end() sends it). The head is validated and rendered natively,
 * without Node's per-response header map; nothing is written before every
 * field has passed Node's checks.
 *
 * @param {import('http').ServerResponse} res
 * @param {number} statusCode 100-999.
 * @param {Record<string, string|number|ReadonlyArray<string|number>>|
 *   ReadonlyArray<string|number|ReadonlyArray<string|number>>|null} [headers]
 *   A plain object, a flat array `[name, value, name, value, ...]` or
 *   `[name, value]` pairs, as writeHead() accepts.
 * @param {string|Buffer|Uint8Array} [data] The body; strings as UTF-8.
 * @returns {import('http').ServerResponse} `res`.
 * @throws {RangeError} ERR_HTTP_INVALID_STATUS_CODE
 * @throws {TypeError} ERR_INVALID_HTTP_TOKEN, ERR_HTTP_INVALID_HEADER_VALUE,
 *   ERR_INVALID_CHAR, ERR_INVALID_ARG_VALUE, ERR_INVALID_ARG_TYPE, as
 *   writeHead() and end() throw them.
 * @throws {Error} ERR_HTTP_HEADERS_SENT when the head was already rendered.
 */
function send(res, statusCode, headers, data) {
  const own = ownMethods(res);
  if (own !== null) return sendWithNode(res, statusCode, headers, data, own);
  const started = headStarted(res);
  if (started !== null) return sendWithNode(res, statusCode, headers, data, started);
  const code = statusCode | 0;
  if (code < 100 || code > 999) return sendWithNode(res, statusCode, headers, data, R.INVALID);
  const flat = joinHeaders(headers);
  if (flat === null) return sendWithNode(res, statusCode, headers, data, R.INVALID);
  if (flat.arrays && uniqueHeadersOf(res)) {
    return sendWithNode(res, statusCode, headers, data, R.UNIQUE_HEADERS);
  }
  const kind = sendBodyKind(data);
  if (typeof kind === 'string') return sendWithNode(res, statusCode, headers, data, kind);
  const done = writeDirect(res, FROM_FIELDS, code, flat.joined, flat.count, data, kind, undefined, undefined);
  return typeof done === 'string' ? sendWithNode(res, statusCode, headers, data, done) : done;
}

/**
 * Validates and renders the fixed part of a head once (status line and
 * header fields) and returns an object whose `send(res, data)` does what
 * `send(res, statusCode, headers, data)` does. Per response only `Date`,
 * `Connection`/`Keep-Alive` and `Content-Length` are added, following the
 * response's `sendDate`, keep-alive state and the server's
 * `keepAliveTimeout`. The headers are copied: changing the object later does
 * not change the template. Safe to share across requests and servers of one
 * thread.
 *
 * @param {number} statusCode 100-999.
 * @param {Record<string, string|number|ReadonlyArray<string|number>>|
 *   ReadonlyArray<string|number>|null} [headers]
 * @returns {{ statusCode: number, send(res: import('http').ServerResponse,
 *   data?: string|Uint8Array): import('http').ServerResponse }}
 * @throws What writeHead(statusCode, headers) throws for the same arguments
 *   (ERR_HTTP_INVALID_STATUS_CODE, ERR_INVALID_HTTP_TOKEN,
 *   ERR_HTTP_INVALID_HEADER_VALUE, ERR_INVALID_CHAR, ERR_INVALID_ARG_VALUE)
 *   on a response of no server (node-internals.js throwLikeWriteHead():
 *   with _storeHeader() wrapped before the package was loaded, the status
 *   code only, and each send() is Node's).
 */
function template(statusCode, headers) {
  // Node itself judges the arguments, on a response that has no socket.
  throwLikeWriteHead(statusCode, headers);
  const code = statusCode | 0;
  // A copy, array values and [name, value] pairs included: changing them
  // later changes neither the fast path nor Node's path (which writeHead()
  // takes with this copy).
  const snapshot = copyHeaders(headers);
  const flat = joinHeaders(snapshot);
  const reason = STATUS_CODES[code] || 'unknown';
  // Why every send() of this template is Node's, or null.
  let alwaysNode = binding === null ? R.NO_ADDON : R.INVALID;
  let prepared;
  // `_contentLength` of every response when the template names a
  // Content-Length (else the body length the addon adds).
  let contentLength;
  if (binding !== null && flat !== null) {
    prepared = binding.compileTemplate(code, reason + SEP + flat.joined, flat.count);
    // Fields that make the fast path step aside every time
    // (Transfer-Encoding, Trailer, Expect, non-ASCII Content-Disposition):
    // the addon names them.
    alwaysNode = STEP_ASIDE_NAMES[results[RESULT_REASON]] || null;
    if (prepared !== undefined && (results[RESULT_BITS] & RESULT_CONTENT_LENGTH_FIELD) !== 0) {
      contentLength = contentLengthOf(flat.joined);
    }
  }
  const arrays = flat !== null && flat.arrays;

  function sendTemplate(res, data) {
    const own = ownMethods(res);
    if (own !== null) return sendWithNode(res, code, snapshot, data, own);
    if (alwaysNode !== null) return sendWithNode(res, code, snapshot, data, alwaysNode);
    const started = headStarted(res);
    if (started !== null) return sendWithNode(res, code, snapshot, data, started);
    if (res.statusMessage && res.statusMessage !== reason) {
      return sendWithNode(res, code, snapshot, data, R.STATUS_MESSAGE);
    }
    if (arrays && uniqueHeadersOf(res)) return sendWithNode(res, code, snapshot, data, R.UNIQUE_HEADERS);
    const kind = sendBodyKind(data);
    if (typeof kind === 'string') return sendWithNode(res, code, snapshot, data, kind);
    const done = writeDirect(res, FROM_TEMPLATE, code, prepared, 0, data, kind, undefined, contentLength);
    return typeof done === 'string' ? sendWithNode(res, code, snapshot, data, done) : done;
  }

  return Object.freeze({ statusCode: code, send: sendTemplate });
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * `send(res, statusCode, headers, JSON.stringify(value))` with
 * `Content-Type: application/json; charset=utf-8` first, unless `headers`
 * name a Content-Type of their own.
 *
 * @param {import('http').ServerResponse} res
 * @param {number} statusCode
 * @param {unknown} value Anything JSON.stringify() turns into a string.
 * @param {Record<string, string|number|ReadonlyArray<string|number>>|
 *   ReadonlyArray<string|number>|null} [headers]
 * @returns {import('http').ServerResponse}
 * @throws {TypeError} ERR_INVALID_ARG_VALUE when `value` has no JSON text
 *   (undefined, a function, a symbol); JSON.stringify()'s own TypeError for
 *   cycles and BigInt; send()'s errors.
 */
function json(res, statusCode, value, headers) {
  const body = JSON.stringify(value);
  if (typeof body !== 'string') {
    const err = new TypeError(
      `The argument 'value' is invalid. Received ${typeof value}: it has no JSON representation`);
    err.code = 'ERR_INVALID_ARG_VALUE';
    throw err;
  }
  const merged = hasHeaderNamed(headers, ['content-type']) ?
    headers : withHeader(headers, 'Content-Type', JSON_CONTENT_TYPE, true);
  return send(res, statusCode, merged, body);
}

module.exports = { send, template, json, withContentLength };
