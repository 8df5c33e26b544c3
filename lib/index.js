'use strict';

/**
 * fast-response: Node's `res.end(data)` for http.ServerResponse, with the
 * response head rendered natively and head and body sent with one writev(2).
 * Same bytes on the wire, same events, same errors as Node's own end();
 * whatever the fast path does not cover goes to Node's own code.
 *
 * @module fast-response
 */

const { inspect } = require('node:util');
const {
  ServerResponse, nodeEnd, isNodesEnd, setPackageEnd, nodeWrite, isNodesWrite, setPackageWrite, setPackageUncork,
  NODE_COLLECTS_TICK_CHUNKS, nodeWriteHead, setPackageWriteHead, nodeUncork, defineMethod,
  restoreProperty, callOwn, callReplaced, methodToCall, patchedEnd, OutgoingMessage,
} = require('./node-internals');
const { write } = require('./stream');
const { writeHead, RENDERS_HEADS } = require('./write-head');
const { loadError } = require('./binding');
const { end, endQueuedWrites } = require('./end');
const { send, template, json } = require('./send');
const statistics = require('./stats');
const { installClient, uninstallClient } = require('./client');
const { R } = require('./reasons');
const { uncork: uncorkJoined, endCollected, JOINS_CHUNKS } = require('./chunked-buffer');

let installed = null;

/** Whether the native addon loaded (false: every call takes Node's path). */
const native = loadError === null;

/**
 * Defines `ServerResponse.prototype.fastEnd(data[, encoding][, callback])`
 * and `fastWrite()`, and `ClientRequest.prototype.fastEnd()` (lib/client.js);
 * with `{ patchEnd: true }` also routes every `res.end()` of every
 * http.ServerResponse through the fast path (Express, Fastify, Koa and
 * clients built on http.request() gain without code changes), and, where
 * it was measured to gain on the running Node, `res.write()` (Node 18 to
 * 22: Node 24 and later collect a tick's chunks themselves),
 * `res.writeHead()` (Node 20 and later, lib/write-head.js), `res.uncork()`
 * (Node 22 and later, lib/chunked-buffer.js) and every `req.end()` of every
 * http.ClientRequest (Node 18 to 22: on 24 and later requests are Node's
 * own). write(), writeHead() and uncork() are patched only over Node's
 * own; an end() someone else wrapped before install({ patchEnd: true })
 * (an APM agent, loaded before the package or after a plain install()) is
 * called by the patched one, and so are end() and write() wrapped on
 * OutgoingMessage.prototype at any time. Calling it again while installed changes
 * nothing but can turn `patchEnd` on.
 *
 * @param {{ patchEnd?: boolean }} [options]
 * @returns {() => void} `uninstall`: restores what was there before.
 * @throws {TypeError} ERR_INVALID_ARG_TYPE when `options` is not an object,
 *   or `options.patchEnd` is given and not a boolean.
 */
function install(options) {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw invalidArgType('options', 'of type object', options);
  }
  const patchEnd = options !== undefined && options.patchEnd === true;
  // Node's validateBoolean(): `{ patchEnd: 'yes' }` is a mistake, not false.
  if (options !== undefined && options.patchEnd !== undefined && typeof options.patchEnd !== 'boolean') {
    throw invalidArgType('options.patchEnd', 'of type boolean', options.patchEnd, 'property');
  }
  statistics.logInstall(native, loadError, patchEnd);
  const proto = ServerResponse.prototype;
  if (installed === null) {
    // Own property descriptors (or undefined): uninstall() puts back exactly
    // what was there, attributes included. write(), writeHead() and
    // uncork() are taken when patchEnd is turned on, end() by its patch
    // (endPatch.descriptor).
    installed = {
      fastEnd: Object.getOwnPropertyDescriptor(proto, 'fastEnd'),
      fastWrite: Object.getOwnPropertyDescriptor(proto, 'fastWrite'),
      write: undefined,
      writeHead: undefined,
      uncork: undefined,
      endPatch: null,
    };
    defineMethod(proto, 'fastEnd', function fastEnd(data, encoding, callback) {
      return fastResponseEnd(this, data, encoding, callback);
    });
    defineMethod(proto, 'fastWrite', function fastWrite(chunk, encoding, callback) {
      return fastResponseWrite(this, chunk, encoding, callback);
    });
  }
  if (patchEnd && installed.endPatch === null) {
    // What stands there now, not at the first install(): a wrapper added in
    // between (an APM agent loaded after install()) is called by the patch
    // and put back by uninstall().
    installed.write = Object.getOwnPropertyDescriptor(proto, 'write');
    installed.writeHead = Object.getOwnPropertyDescriptor(proto, 'writeHead');
    installed.uncork = Object.getOwnPropertyDescriptor(proto, 'uncork');
    // Over Node's own end() the patch is the package's fast path; over
    // anyone else's it hands every call to that end() (patchedEnd()).
    const endPatch = patchedEnd(proto, endUnderPatch);
    installed.endPatch = endPatch;
    setPackageEnd(endPatch);
    defineMethod(proto, 'end', endPatch.method);
    // write() too, over Node's own (lib/stream.js; measured on Node 20 with
    // benchmark/http/stream.js, 10 runs: 1.13-1.34x at 64 B and 1 KiB, one
    // write per tick and 8 in one tick). Not on Node 24 and later, which
    // collect every tick's chunks themselves (on Node 22 only a corked
    // response's: its write() steps aside for those, lib/stream.js).
    // (The package's own, left by an uninstall() under a wrapper that has
    // since put it back, is looked through, here and below.)
    if (!NODE_COLLECTS_TICK_CHUNKS && nodeWrite !== null &&
        (proto.write === nodeWrite || proto.write === patchedWriteMethod)) {
      setPackageWrite(patchedWriteMethod);
      takeOver(proto, 'write', patchedWriteMethod);
    }
    // uncork() too, over Node's own on Node 22 and later: the string chunks
    // Node collected framed into one write or joined before it sends them
    // (lib/chunked-buffer.js; every tick's on Node 24 and later, framed
    // there, a user-corked response's on 22).
    if (JOINS_CHUNKS && (proto.uncork === nodeUncork || proto.uncork === patchedUncorkMethod)) {
      setPackageUncork(patchedUncorkMethod);
      takeOver(proto, 'uncork', patchedUncorkMethod);
    }
    // writeHead() too, over Node's own: the head rendered natively where
    // Node's would take its headers argument as it is (lib/write-head.js).
    // Not on Node 18, whose head rules differ.
    if (RENDERS_HEADS && (proto.writeHead === nodeWriteHead || proto.writeHead === patchedWriteHeadMethod)) {
      setPackageWriteHead(patchedWriteHeadMethod);
      takeOver(proto, 'writeHead', patchedWriteHeadMethod);
    }
  }
  // http.ClientRequest: req.fastEnd(), and with patchEnd every req.end().
  installClient(patchEnd);
  return uninstall;
}

// The own property descriptor (or undefined) each of write(), writeHead()
// and uncork() of ServerResponse.prototype had when the package's method
// first replaced it: an install() that finds the package's method there
// again (an agent that wrapped it after install() and put it back after
// uninstall()) looks through it, and its uninstall() puts this back.
const replacedDescriptors = { write: undefined, writeHead: undefined, uncork: undefined };

/** install({ patchEnd: true }): `method` in place of `proto[name]`. */
function takeOver(proto, name, method) {
  if (proto[name] === method) installed[name] = replacedDescriptors[name];
  else replacedDescriptors[name] = installed[name];
  defineMethod(proto, name, method);
}

/**
 * Ends the response like Node's `res.end(data[, encoding][, callback])`:
 * same bytes on the wire (head and body), same events ('prefinish',
 * 'finish', 'close'), same state afterwards (`headersSent`, `writableEnded`,
 * `_header`, keep-alive), same errors. Honors everything set before it:
 * `statusCode`, `statusMessage`, `setHeader()`, `writeHead()`, `sendDate`,
 * HEAD, 204 and 304 (no body), `Connection`, the server's
 * `keepAliveTimeout` and `maxRequestsPerSocket`.
 *
 * After writes in the same tick on Node 24 and later, which collect a
 * tick's chunks (kChunkedBuffer), the chunk Node's end() flushes (with a
 * string `data` in it, as Node collects it) is sent by the package's
 * uncork(), framed as one socket write (lib/chunked-buffer.js
 * flushCollected()), where Node's end() would call Node's own.
 *
 * The fast path renders the head natively and writes head and body with one
 * writev(2) on the socket; a Buffer body is not copied. It steps aside for
 * Node's own end() when the socket is TLS, corked by someone else or has
 * queued writes, the head is already sent, the body is absent, trailers
 * are set, `strictContentLength` is set, and in the other cases stats()
 * names. A response queued behind the socket's current one (pipelining)
 * is rendered natively and joins the socket's next writev(2) (lib/gate.js,
 * lib/pipeline.js). A response whose `end` was replaced (compression
 * middleware, the HTTP/2 compatibility API) is ended with its own `end`
 * (counted 'end-replaced'); when that replacement calls fastEnd() back,
 * the inner call goes to what it stands over: the package's path over
 * Node's own end(), an agent's wrapper beneath it called.
 *
 * @param {import('http').ServerResponse} res
 * @param {string|Buffer|Uint8Array} data The body. A string is encoded with
 *   `encoding` (default 'utf8').
 * @param {BufferEncoding|Function} [encoding]
 * @param {(err?: Error) => void} [callback] Called on 'finish', as Node's.
 * @returns {import('http').ServerResponse} `res`, as Node's end().
 * @throws {TypeError} ERR_INVALID_ARG_TYPE for a body that is not a string,
 *   Buffer or Uint8Array; ERR_HTTP_INVALID_STATUS_CODE, ERR_INVALID_CHAR as
 *   Node's end(); ending twice emits ERR_STREAM_WRITE_AFTER_END, as Node.
 */
function fastResponseEnd(res, data, encoding, callback) {
  // Inside a replaced end() this package called, which calls fastEnd() back
  // (res.end = function (data) { return this.fastEnd(data); }): what that
  // replacement stands over (node-internals.js methodToCall()).
  const own = methodToCall(res, 'end');
  // Only Node's own end() (or this package's patch of it) is taken over; an
  // end() wrapped by anyone else (compression, APM, the HTTP/2 compatibility
  // API), before or after this package was loaded, is called, so that it
  // sees the call.
  // A ClientRequest (its own fast path is req.fastEnd()) or anything else
  // that is no http.ServerResponse: its own end().
  if (!(res instanceof ServerResponse) && typeof own === 'function') {
    statistics.countFallback(R.NOT_HTTP1, res, data);
    return callReplaced(own, res, 'end', data, encoding, callback);
  }
  if (!isNodesEnd(own) && typeof own === 'function') {
    statistics.countFallback(R.END_REPLACED, res, data);
    return callReplaced(own, res, 'end', data, encoding, callback);
  }
  return end(res, data, encoding, callback);
}

/**
 * Writes a chunk of the body like Node's `res.write(chunk[, encoding][,
 * callback])`: the same bytes (the head with the first chunk, each chunk
 * framed as Node frames it), the same return value ('false': wait for
 * 'drain'), writableLength, callbacks, 'drain' and errors. A chunk of a
 * chunked body goes to the socket as one framed string, or a Buffer as
 * three writes, where Node makes four, and a tick's framed strings join
 * one socket queue entry (lib/stream.js); the socket sends the tick's
 * chunks with one writev(2), as with Node. Steps aside to Node's own
 * write() where it does not apply (stats() names why: a body Node does not
 * frame, on Node 22 a response the user corked, whose chunks Node 22
 * collects, a response waiting behind another, strictContentLength, ...).
 * Node 24 and later collect a tick's chunks themselves: there Node's
 * write() collects the chunk, and the first string write of a tick
 * schedules the package's uncork() in place of Node's, which sends the
 * tick's string chunks framed as one socket write (lib/stream.js
 * writeCollected()).
 *
 * @param {import('http').ServerResponse} res
 * @param {string|Buffer|Uint8Array} chunk
 * @param {BufferEncoding|Function} [encoding]
 * @param {(err?: Error|null) => void} [callback] Called once the chunk is
 *   written (or with the error), as Node's.
 * @returns {boolean} false when the socket's buffer is full: wait for
 *   'drain', as Node's.
 * @throws {TypeError} ERR_INVALID_ARG_TYPE, ERR_STREAM_NULL_VALUES as
 *   Node's write(); write() after end() emits ERR_STREAM_WRITE_AFTER_END.
 */
function fastResponseWrite(res, chunk, encoding, callback) {
  // Inside a replaced write() that calls fastWrite() back: what it stands
  // over, as in fastResponseEnd().
  const own = methodToCall(res, 'write');
  // (fastWrite itself as the response's write() would call itself.)
  if (!(res instanceof ServerResponse) && typeof own === 'function') {
    statistics.countFallback(R.NOT_HTTP1, res, chunk);
    return callReplaced(own, res, 'write', chunk, encoding, callback);
  }
  if (!isNodesWrite(own) && typeof own === 'function' && own !== res.fastWrite) {
    statistics.countFallback(R.WRITE_REPLACED, res, chunk);
    return callReplaced(own, res, 'write', chunk, encoding, callback);
  }
  return write(res, chunk, encoding, callback);
}

// write(), writeHead() and uncork() under install({ patchEnd: true }), each
// over Node's own. Left under someone's wrapper by uninstall(), each is
// what it stood over again. write() and uncork() stand over
// OutgoingMessage.prototype's, looked up at each call: a wrapper put there
// after install() is called.

function patchedWriteMethod(chunk, encoding, callback) {
  const below = OutgoingMessage.prototype.write;
  if (below !== nodeWrite || installed === null) return callOwn(below, this, chunk, encoding, callback);
  return write(this, chunk, encoding, callback);
}

function patchedWriteHeadMethod(statusCode, reason, obj) {
  if (installed === null) return nodeWriteHead.call(this, statusCode, reason, obj);
  return writeHead(this, statusCode, reason, obj);
}

function patchedUncorkMethod() {
  const below = OutgoingMessage.prototype.uncork;
  if (below !== nodeUncork || installed === null) return below.call(this);
  return uncorkJoined.call(this);
}

// `res.end()` under install({ patchEnd: true }) over Node's own end()
// (node-internals.js patchedEnd()): end() with no data is Node's own
// (counted as fastEnd() counts it: 'empty-body' for '', 'no-body' for
// nothing or a callback); everything else is fastResponse.end().
function endUnderPatch(res, data, encoding, callback) {
  if (!data || typeof data === 'function') {
    // Node 24+: the chunks this tick's write() calls collected, written
    // with the last chunk natively (lib/chunked-buffer.js).
    const ended = endCollected(res, data, encoding, callback) ?? endQueuedWrites(res, data, encoding, callback);
    if (ended !== null) return ended;
    statistics.countFallback(data === '' ? R.EMPTY_BODY : R.NO_BODY, res, data);
    return nodeEnd.call(res, data, encoding, callback);
  }
  return end(res, data, encoding, callback);
}

/**
 * Undoes install(): removes `fastEnd` and `fastWrite` (and the requests'
 * `fastEnd`) and puts back `end`, `write`, `writeHead` and `uncork` (and
 * the requests' `end`) exactly as they were, property attributes included.
 * A method someone wrapped after install() (an APM agent loaded later)
 * keeps its wrapper: the package's method under it stays, and is what it
 * stood over (Node's, or an earlier wrapper) from then on. Does nothing
 * when not installed; install() may be called again after.
 */
function uninstall() {
  uninstallClient();
  if (installed === null) return;
  const proto = ServerResponse.prototype;
  restoreProperty(proto, 'fastEnd', installed.fastEnd);
  restoreProperty(proto, 'fastWrite', installed.fastWrite);
  // Each method is put back while it is still the package's: a wrapper
  // someone added over it after install() (an APM agent) stays, and the
  // package's method under it is what it stood over from now on.
  if (installed.endPatch !== null) {
    installed.endPatch.retire();
    if (proto.end === installed.endPatch.method) restoreProperty(proto, 'end', installed.endPatch.descriptor);
  }
  if (proto.write === patchedWriteMethod) restoreProperty(proto, 'write', installed.write);
  if (proto.writeHead === patchedWriteHeadMethod) restoreProperty(proto, 'writeHead', installed.writeHead);
  if (proto.uncork === patchedUncorkMethod) restoreProperty(proto, 'uncork', installed.uncork);
  setPackageEnd(null);
  setPackageWrite(null);
  setPackageUncork(null);
  setPackageWriteHead(null);
  installed = null;
}

/**
 * Counts of this thread's calls since start (or resetStats()):
 * `fast` responses written with one writev(2), `partial` ones whose rest was
 * handed to socket.write() (full socket buffer), `writes` chunks the
 * package framed (or ticks it started, Node 24+), `heads` rendered by the
 * patched writeHead(), `uncorks` framed or joined, `fallback` calls that
 * went to Node's own code and `reasons`: fallbacks by reason ('tls',
 * 'head-sent', 'socket-busy', ...), `writev`: the addon's writev(2) calls
 * and bytes, and `requests`: the same counts for outgoing requests.
 *
 * @returns {import('./index').Stats} The shape, types and units: index.d.ts
 *   `Stats` (one definition for both).
 */
function stats() {
  return statistics.stats();
}

function invalidArgType(name, expected, actual, what = 'argument') {
  const err = new TypeError(`The "${name}" ${what} must be ${expected}. Received ${describeReceived(actual)}`);
  err.code = 'ERR_INVALID_ARG_TYPE';
  return err;
}

// The "Received ..." part of Node's ERR_INVALID_ARG_TYPE message.
function describeReceived(value) {
  if (value === null || value === undefined) return `${value}`;
  if (typeof value === 'function') return `function ${value.name}`;
  if (typeof value === 'object') {
    const ctor = value.constructor;
    return typeof ctor === 'function' && ctor.name ? `an instance of ${ctor.name}` : inspect(value, { depth: -1 });
  }
  let shown = inspect(value, { colors: false });
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`;
  return `type ${typeof value} (${shown})`;
}

/** Sets stats() back to zero (this thread's counts). */
function resetStats() {
  statistics.resetStats();
}

// Plain `name` and `name: identifier` entries only: Node's ES module loader
// finds a CommonJS module's named exports by reading this literal
// (cjs-module-lexer), and stops at the first entry of another form.
module.exports = {
  end: fastResponseEnd,
  write: fastResponseWrite,
  send,
  template,
  json,
  install,
  uninstall,
  stats,
  resetStats,
  native,
  loadError,
};
