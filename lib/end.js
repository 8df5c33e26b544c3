'use strict';

// fastResponse.end(res, data[, encoding][, callback]): Node's
// `res.end(data, encoding, callback)` with the head rendered natively and
// head and body sent with one writev(2). Anything the fast path does not
// cover goes to Node's own end() with the same arguments.

const { ServerResponse, nodeEnd } = require('./node-internals');
const { layout } = require('./binding');
const { bodyKind, toBytes } = require('./body');
const { FROM_RESPONSE, writeDirect } = require('./gate');
const { countFallback } = require('./stats');
const { flushCollected, endCollected } = require('./chunked-buffer');
const { endQueued, endQueuedData } = require('./stream');
const { R } = require('./reasons');

const { BODY_BYTES } = layout;

// Set while send() hands a response it could not render to Node: send()
// has counted that call's fallback already, so end() does not count it again.
let inSendFallback = false;

function fallback(res, reason, data, encoding, callback) {
  // Node 24+: the chunks this tick's writes collected (res.fastWrite()),
  // written natively with end()'s data and the last chunk.
  const ended = endCollected(res, data, encoding, callback);
  if (ended !== null) return ended;
  if (reason === R.NO_BODY || reason === R.EMPTY_BODY) {
    const queuedEnd = endQueuedWrites(res, data, encoding, callback);
    if (queuedEnd !== null) return queuedEnd;
  } else if (reason === R.HEAD_SENT && !inSendFallback) {
    // Node 18 to 22: end(data) after a tick's writes, the data framed
    // into the tick's queued chunks (lib/stream.js endQueuedData()).
    const queuedEnd = endQueuedData(res, data, encoding, callback);
    if (queuedEnd !== null) return queuedEnd;
  }
  if (!inSendFallback) countFallback(reason, res, data);
  // Node 24+: a tick's chunks collected by res.fastWrite() (and end()'s
  // string data) leave framed; Node's end() then finds them sent.
  if (flushCollected(res, data, encoding)) {
    const cb = typeof encoding === 'function' ? encoding : callback;
    return typeof cb === 'function' ? nodeEnd.call(res, cb) : nodeEnd.call(res);
  }
  return nodeEnd.call(res, data, encoding, callback);
}

/**
 * Node 18 to 22, end() without data (`data` falsy or the callback): the
 * tick's framed chunks waiting in the socket's queue leave with the last
 * chunk (lib/stream.js endQueued()). Returns `res`, or null where Node's
 * end() is to be called.
 */
function endQueuedWrites(res, data, encoding, callback) {
  return endQueued(res, typeof data === 'function' ? data : (typeof encoding === 'function' ? encoding : callback));
}

/**
 * end() for send()'s Node path: the head is Node's; the body may still go
 * out fast (counted as such); the fallback was counted by send().
 */
function endAfterNodeHead(res, data) {
  inSendFallback = true;
  try {
    return end(res, data);
  } finally {
    inSendFallback = false;
  }
}

/**
 * Node's `res.end(data, encoding, callback)`, fast. See index.js for the
 * public documentation.
 *
 * @param {import('http').ServerResponse} res
 * @param {string|Uint8Array} data
 * @param {string|Function} [encoding]
 * @param {Function} [callback]
 * @returns {import('http').ServerResponse}
 */
function end(res, data, encoding, callback) {
  let chunk = data;
  let enc = encoding;
  let cb = callback;
  if (typeof enc === 'function') {
    cb = enc;
    enc = undefined;
  }
  // end(callback): no data, as Node's end() reads it.
  let kind = typeof chunk === 'function' ? R.NO_BODY : bodyKind(chunk, enc);
  if (typeof kind === 'string') return fallback(res, kind, data, encoding, callback);
  if (kind === -1) {
    chunk = toBytes(chunk, enc);
    if (chunk === null) return fallback(res, R.ENCODING, data, encoding, callback);
    kind = BODY_BYTES;
  }
  // Node's _send() joins the head to a string in UTF-8 (kind HEAD_UTF8)
  // or exactly 'latin1'.
  const joined = enc === 'latin1' && typeof chunk === 'string' ? 'latin1' : undefined;
  const done = writeDirect(res, FROM_RESPONSE, 0, '', 0, chunk, kind, cb, undefined, joined);
  return typeof done === 'string' ? fallback(res, done, data, encoding, callback) : done;
}

module.exports = { end, endAfterNodeHead, endQueuedWrites, ServerResponse };
