'use strict';

// send(), template() and json(): status, header fields and body in one call,
// the head validated and rendered by src/head.cc without Node's per-response
// header map.

const {
  ServerResponse,
  STATUS_CODES,
  nodeEnd,
  nodeWriteHead,
  isNodesEnd,
  kOutHeaders,
  uniqueHeadersOf,
  throwLikeWriteHead,
} = require('./node-internals');
const { end, endAfterNodeHead } = require('./end');
const w = require('./write');
const { SEP, joinHeaders } = require('./fields');

const { binding, results } = w;

function hasFieldNamed(headers, lowerNames) {
  if (headers === undefined || headers === null || typeof headers !== 'object') {
    return false;
  }
  const check = (name) => typeof name === 'string' && lowerNames.includes(name.toLowerCase());
  if (Array.isArray(headers)) {
    if (headers.length !== 0 && Array.isArray(headers[0])) {
      return headers.some((entry) => Array.isArray(entry) && check(entry[0]));
    }
    for (let i = 0; i < headers.length; i += 2) if (check(headers[i])) return true;
    return false;
  }
  return Object.keys(headers).some(check);
}

const FRAMING_FIELDS = ['content-length', 'transfer-encoding'];

/**
 * `headers` plus `Content-Length: <byte length of data>` after the given
 * fields, where the response has a body and neither the headers nor the
 * response's own header map say how the body is framed. Malformed headers
 * are returned as they are, so that writeHead() throws its own error.
 */
function withContentLength(res, statusCode, headers, data) {
  if (!res._hasBody || !w.statusHasBody(statusCode | 0)) return headers;
  let length;
  if (data === undefined || data === null || data === '') length = 0;
  else if (typeof data === 'string') length = Buffer.byteLength(data);
  else if (data instanceof Uint8Array) length = data.byteLength;
  else return headers;
  if (hasFieldNamed(headers, FRAMING_FIELDS)) return headers;
  if (typeof res.hasHeader === 'function' &&
      (res.hasHeader('content-length') || res.hasHeader('transfer-encoding'))) {
    return headers;
  }
  if (headers === undefined || headers === null) return { 'Content-Length': length };
  if (Array.isArray(headers)) {
    if (headers.length !== 0 && Array.isArray(headers[0])) {
      return [...headers, ['Content-Length', length]];
    }
    return headers.length % 2 === 0 ? [...headers, 'Content-Length', length] : headers;
  }
  if (typeof headers !== 'object') return headers;
  return { ...headers, 'Content-Length': length };
}

/** Node's own path for send(): writeHead() with Content-Length, then end(). */
// The call is counted under `reason` once; when the body still goes out
// through the addon after Node rendered the head, it counts as fast too.
function sendWithNode(res, statusCode, headers, data, reason) {
  // Node 18 (w.NODE_RENDERS_HEAD): Node renders every head; that is the
  // mode, not a fallback, and end() counts what happens to the body.
  if (reason !== undefined) w.countFallback(reason);
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
 * compatibility API's), they must be called. Returns that reason, or null.
 */
function ownMethods(res) {
  if (!(res instanceof ServerResponse)) return 'not-http1';
  if (!isNodesEnd(res.end)) return 'end-replaced';
  if (res.writeHead !== nodeWriteHead) return 'writehead-replaced';
  return null;
}

/** Body kind of send()'s `data` (no encoding argument: strings are UTF-8). */
function sendBodyKind(data) {
  if (data === undefined || data === null || data === '') return w.BODY_NONE;
  if (typeof data === 'string') return w.BODY_UTF8 | w.HEAD_UTF8;
  if (data instanceof Uint8Array) return data.byteLength === 0 ? w.BODY_NONE : w.BODY_BYTES;
  return 'body-type';
}

function finishSend(res, header, joined, contentLength, data) {
  const remaining = results[0];
  w.applyHead(res, header, joined, contentLength);
  return w.complete(res, res.socket, results[3], remaining, data, undefined);
}

/**
 * Sends a whole response: what `res.writeHead(statusCode, headers)` followed
 * by `res.end(data)` does, with `Content-Length` added after the given fields
 * when the response has a body and `headers` names neither Content-Length
 * nor Transfer-Encoding. The head is validated and rendered natively,
 * without Node's per-response header map; nothing is written before every
 * field has passed Node's checks.
 *
 * @param {import('http').ServerResponse} res
 * @param {number} statusCode 100-999.
 * @param {Record<string, string|number|ReadonlyArray<string|number>>|
 *   ReadonlyArray<string|number>|null} [headers] A plain object, or a flat
 *   array `[name, value, name, value, ...]` as writeHead() accepts.
 * @param {string|Buffer|Uint8Array} [data] The body; strings as UTF-8.
 * @returns {import('http').ServerResponse} `res`.
 * @throws {RangeError} ERR_HTTP_INVALID_STATUS_CODE
 * @throws {TypeError} ERR_INVALID_HTTP_TOKEN, ERR_HTTP_INVALID_HEADER_VALUE,
 *   ERR_INVALID_CHAR, ERR_INVALID_ARG_VALUE, ERR_INVALID_ARG_TYPE, as
 *   writeHead() and end() throw them.
 * @throws {Error} ERR_HTTP_HEADERS_SENT when the head was already rendered.
 */
function send(res, statusCode, headers, data) {
  const own = w.NODE_RENDERS_HEAD ? undefined : ownMethods(res);
  if (own !== null) return sendWithNode(res, statusCode, headers, data, own);
  if (res._header || (kOutHeaders !== undefined && res[kOutHeaders] !== null)) {
    // writeHead() throws, or merges with setHeader()'s fields: Node's path.
    return sendWithNode(res, statusCode, headers, data, res._header ? 'head-rendered' : 'header-map');
  }
  const code = statusCode | 0;
  if (code < 100 || code > 999) return sendWithNode(res, statusCode, headers, data, 'invalid');
  const flat = joinHeaders(headers);
  if (flat === null) return sendWithNode(res, statusCode, headers, data, 'invalid');
  if (flat.arrays && uniqueHeadersOf(res)) {
    return sendWithNode(res, statusCode, headers, data, 'unique-headers');
  }
  const kind = sendBodyKind(data);
  if (typeof kind === 'string') return sendWithNode(res, statusCode, headers, data, kind);
  const fd = w.directFd(res);
  if (typeof fd === 'string') return sendWithNode(res, statusCode, headers, data, fd);
  const seconds = w.keepAliveSeconds(res);
  const max = w.maxRequests(res);
  if (seconds !== seconds || max !== max) {
    return sendWithNode(res, statusCode, headers, data, 'keep-alive-value');
  }

  const reason = w.prepareStatus(res, code);
  if (w.rejectsBody(res) && kind !== w.BODY_NONE) {
    return sendWithNode(res, statusCode, headers, data, 'body-not-allowed');
  }
  const header = w.writeResponse(
    fd, code, reason + SEP + flat.joined, flat.count,
    w.stateBits(res) | w.VALIDATE | w.CONTENT_LENGTH_AS_FIELD, seconds, max,
    data, res._hasBody ? kind : w.BODY_NONE, typeof data === 'string' ? data.length : 0);
  if (header === undefined) {
    return sendWithNode(res, statusCode, headers, data,
                        results[0] === w.INVALID ? 'invalid' : 'head-fields');
  }
  return finishSend(res, header, flat.joined, undefined, data);
}

// template()'s copy of its headers: array values and [name, value] pairs are
// copied too, so that changing them later changes neither the fast path nor
// Node's path (which writeHead() takes with this copy). Anything that is not
// an object (writeHead() reads a string as the reason phrase) stays as it is.
function copyHeaders(headers) {
  const copyValue = (value) => (Array.isArray(value) ? value.slice() : value);
  if (Array.isArray(headers)) {
    return headers.map((entry) => (Array.isArray(entry) ? entry.map(copyValue) : entry));
  }
  if (headers === null || typeof headers !== 'object') return headers;
  const copy = {};
  for (const name of Object.keys(headers)) copy[name] = copyValue(headers[name]);
  return copy;
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
 *   ERR_HTTP_INVALID_HEADER_VALUE, ERR_INVALID_CHAR, ERR_INVALID_ARG_VALUE).
 */
function template(statusCode, headers) {
  // Node itself judges the arguments, on a response that has no socket.
  throwLikeWriteHead(statusCode, headers);
  const code = statusCode | 0;
  const snapshot = copyHeaders(headers);
  const flat = joinHeaders(snapshot);
  const reason = STATUS_CODES[code] || 'unknown';
  let prepared;
  let fieldFlags = 0;
  // `_contentLength` of every response when the template names a
  // Content-Length (else the body length the addon adds).
  let contentLength;
  if (binding !== null && flat !== null) {
    prepared = binding.compileTemplate(code, reason + SEP + flat.joined, flat.count);
    fieldFlags = results[1];
    if (prepared !== undefined && (fieldFlags & w.FIELD_FLAG_CONTENT_LENGTH) !== 0) {
      contentLength = w.contentLengthOf(flat.joined);
    }
  }
  // Fields that make the fast path step aside every time (Transfer-Encoding,
  // Trailer, Expect, non-ASCII Content-Disposition): src/head.h.
  const alwaysNode = prepared === undefined || (fieldFlags & w.FALLBACK_FIELDS) !== 0;
  const joined = flat === null ? '' : flat.joined;
  const arrays = flat !== null && flat.arrays;

  function sendTemplate(res, data) {
    const own = w.NODE_RENDERS_HEAD ? undefined : ownMethods(res);
    if (own !== null) return sendWithNode(res, code, snapshot, data, own);
    if (alwaysNode || res._header ||
        (kOutHeaders !== undefined && res[kOutHeaders] !== null) ||
        (res.statusMessage && res.statusMessage !== reason) ||
        (arrays && uniqueHeadersOf(res))) {
      return sendWithNode(res, code, snapshot, data, 'template-node-path');
    }
    const kind = sendBodyKind(data);
    if (typeof kind === 'string') return sendWithNode(res, code, snapshot, data, kind);
    const fd = w.directFd(res);
    if (typeof fd === 'string') return sendWithNode(res, code, snapshot, data, fd);
    const seconds = w.keepAliveSeconds(res);
    const max = w.maxRequests(res);
    if (seconds !== seconds || max !== max) {
      return sendWithNode(res, code, snapshot, data, 'keep-alive-value');
    }
    w.prepareStatus(res, code);
    if (w.rejectsBody(res) && kind !== w.BODY_NONE) {
      return sendWithNode(res, code, snapshot, data, 'body-not-allowed');
    }
    const header = w.writeTemplate(
      fd, prepared, fieldFlags, w.stateBits(res) | w.CONTENT_LENGTH_AS_FIELD,
      seconds, max, data, res._hasBody ? kind : w.BODY_NONE,
      typeof data === 'string' ? data.length : 0);
    if (header === undefined) return sendWithNode(res, code, snapshot, data, 'head-fields');
    return finishSend(res, header, joined, contentLength, data);
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
  let merged;
  if (hasFieldNamed(headers, ['content-type'])) {
    merged = headers;
  } else if (Array.isArray(headers)) {
    merged = headers.length !== 0 && Array.isArray(headers[0]) ?
      [['Content-Type', JSON_CONTENT_TYPE], ...headers] :
      ['Content-Type', JSON_CONTENT_TYPE, ...headers];
  } else if (headers === undefined || headers === null) {
    merged = ['Content-Type', JSON_CONTENT_TYPE];
  } else {
    merged = { 'Content-Type': JSON_CONTENT_TYPE, ...headers };
  }
  return send(res, statusCode, merged, body);
}

module.exports = { send, template, json, withContentLength };
