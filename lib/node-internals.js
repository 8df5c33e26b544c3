'use strict';

// What fast-response reads of Node's own http implementation, and how the
// running Node version differs from the others (the version probes), found
// once.
// The symbols are Node's private keys on OutgoingMessage; they are looked up
// by description, so a Node version without one of them makes the fast path
// step aside for the behaviour it guards instead of guessing.

const http = require('node:http');
const { format } = require('node:util');

const { ServerResponse, STATUS_CODES } = http;
const OutgoingMessage = Object.getPrototypeOf(ServerResponse.prototype).constructor;

/**
 * Whether `fn` is Node's own implementation of `name`, told by its source
 * (Function.prototype.toString gives the source of Node's lib/ functions):
 * it is `function name(` and holds each of `markers`, as in Node 18 to 26.
 * A wrapper installed before this package was loaded (an APM or security
 * agent loaded first: `node -r agent -r fast-response/register`) is not:
 * it must see the calls its wrapped method would see, so the fast path then
 * steps aside for it. A Node version whose source differs makes the package
 * step aside too (slower, never wrong).
 */
function isNodesOwn(fn, name, markers) {
  if (typeof fn !== 'function') return false;
  const source = functionSource.call(fn);
  return source.startsWith(`function ${name}(`) && markers.every((m) => source.includes(m));
}

// Function.prototype.toString as V8 defines it, from a realm of its own:
// an agent that masks its wrappers' source (Sentry's fill() with its
// Function.prototype.toString patch gives the wrapped function's) cannot
// pass a wrapper for Node's own here. Used while this module loads, then
// let go (the realm holds about 150 KB).
let functionSource = require('node:vm').runInNewContext('Function.prototype.toString');

function nodesOwnOrNull(fn, name, markers) {
  return isNodesOwn(fn, name, markers) ? fn : null;
}

/**
 * Node's own OutgoingMessage.prototype.end (lib/_http_outgoing.js), or null
 * when it is not recognized: then every call goes to the response's end().
 * Found on OutgoingMessage.prototype, where Node defines it, so that a
 * wrapper on ServerResponse.prototype.end (made before or after this
 * package was loaded) is seen as what it is.
 */
const nodeEnd = nodesOwnOrNull(OutgoingMessage.prototype.end, 'end',
                               ['ERR_STREAM_WRITE_AFTER_END', '_implicitHeader()', 'onFinish', 'write_(this']);
// install({ patchEnd: true })'s end() on ServerResponse.prototype, a
// patchedEnd() (lib/index.js sets it; null otherwise).
let packageEnd = null;

/** lib/index.js: the package's patched end() (a patchedEnd()), or null. */
function setPackageEnd(patch) {
  packageEnd = patch;
}

/**
 * Whether `fn`, a response's end(), is Node's own (or the package's patch of
 * it, while that stands over Node's own): only then may the package take
 * the call over. Any other end() (an APM's, compression middleware's, the
 * HTTP/2 compatibility API's) is called, so that it sees the call.
 */
function isNodesEnd(fn) {
  if (nodeEnd === null) return false;
  return fn === nodeEnd || (packageEnd !== null && fn === packageEnd.method && packageEnd.overNodes());
}

/** Node's own OutgoingMessage.prototype.write, or null (then every write is the response's own). */
const nodeWrite = nodesOwnOrNull(OutgoingMessage.prototype.write, 'write', ['write_(this, chunk']);
// install({ patchEnd: true })'s write() while it stands over Node's own.
let packageWrite = null;

/** lib/index.js: the package's patched write(), or null. */
function setPackageWrite(fn) {
  packageWrite = fn;
}

/**
 * Whether `fn`, a response's write(), is Node's own (or the package's patch
 * of it, while OutgoingMessage.prototype.write, which it stands over, is
 * Node's: a wrapper put there after install() is called).
 */
function isNodesWrite(fn) {
  return isNodesOrPatch(fn, nodeWrite, packageWrite, protoWrite);
}

/**
 * Whether `fn` is `own`, Node's own OutgoingMessage method, or `patch`, the
 * package's patch of it while the method it stands over on
 * OutgoingMessage.prototype (`current()`, read only then) is still Node's
 * own. False when `own` was not found.
 */
function isNodesOrPatch(fn, own, patch, current) {
  return own !== null && (fn === own || (patch !== null && fn === patch && current() === own));
}

// OutgoingMessage.prototype's write() and uncork() as they are now, each
// read with its own name: one property load that reads several names
// (`proto[name]`) turns megamorphic in V8 and stays a slow generic lookup
// in the optimized code of every caller that inlines it (methodToCall()).
const protoWrite = () => OutgoingMessage.prototype.write;
const protoUncork = () => OutgoingMessage.prototype.uncork;

// install({ patchEnd: true })'s uncork() while it stands over Node's own
// (lib/index.js sets it; null otherwise).
let packageUncork = null;

/** lib/index.js: the package's patched uncork(), or null. */
function setPackageUncork(fn) {
  packageUncork = fn;
}

/**
 * Whether `fn`, a response's uncork(), is Node's own (or the package's
 * patch of it, while OutgoingMessage.prototype.uncork, which it stands
 * over, is Node's): only then may the package send what Node's uncork()
 * would send without calling it.
 */
function isNodesUncork(fn) {
  return isNodesOrPatch(fn, nodeUncork, packageUncork, protoUncork);
}

// Node's own _send() and _writeRaw(), through which its end() and write()
// hand every byte to the socket, or null. Instrumentation that replaces
// them (byte counting) must see the bytes: then end() and write() are
// Node's (lib/gate.js, lib/stream.js: 'write-raw-replaced').
const nodeSend = nodesOwnOrNull(OutgoingMessage.prototype._send, '_send', ['_headerSent', '_writeRaw(']);
const nodeWriteRaw = nodesOwnOrNull(OutgoingMessage.prototype._writeRaw, '_writeRaw', ['.write(']);

/**
 * Whether the socket writes a string given without an encoding as UTF-8:
 * its default encoding (socket.setDefaultEncoding()) is Node's 'utf8'.
 * Otherwise end(data), write(data) and send() strings are Node's ('encoding').
 */
function defaultEncodingIsUtf8(socket) {
  const state = socket._writableState;
  return state === undefined || state === null || state.defaultEncoding === 'utf8';
}

/** Whether the message's _send() and _writeRaw() are Node's own. */
function sendsThroughNode(msg) {
  // (An unrecognized one is null: no message's method equals it.)
  return msg._send === nodeSend && msg._writeRaw === nodeWriteRaw;
}

/** Node's own ServerResponse.prototype.writeHead, or null (then always called). */
const nodeWriteHead = nodesOwnOrNull(ServerResponse.prototype.writeHead, 'writeHead',
                                     ['_storeHeader(', 'ERR_HTTP_HEADERS_SENT', 'ERR_HTTP_INVALID_STATUS_CODE']);
// install({ patchEnd: true })'s writeHead() while it stands over Node's
// own (lib/index.js sets it; null otherwise).
let packageWriteHead = null;

/** lib/index.js: the package's patched writeHead(), or null. */
function setPackageWriteHead(fn) {
  packageWriteHead = fn;
}

/**
 * Whether the package may render the head of `res` itself: its writeHead()
 * is Node's own (or the package's patch of it, lib/write-head.js) and so is
 * the _storeHeader() that writeHead() calls. Otherwise writeHead() is
 * called, and through it any wrapper of either (an APM agent's).
 */
function isNodesHead(res) {
  const fn = res.writeHead;
  return nodeWriteHead !== null && (fn === nodeWriteHead || (fn === packageWriteHead && fn !== null)) &&
    res._storeHeader === nodeStoreHeader;
}

/** Node's own OutgoingMessage.prototype._storeHeader, or null. */
const nodeStoreHeader = nodesOwnOrNull(OutgoingMessage.prototype._storeHeader, '_storeHeader',
                                       ['this._header = ', 'this._headerSent = false']);
/** Node's own ServerResponse.prototype._implicitHeader, or null. */
const nodeImplicitHeader = nodesOwnOrNull(ServerResponse.prototype._implicitHeader, '_implicitHeader',
                                          ['this.writeHead(this.statusCode)']);

function findSymbol(object, description) {
  for (const sym of Object.getOwnPropertySymbols(object)) {
    if (sym.description === description) return sym;
  }
  return undefined;
}

// A response that never sees a socket, to learn the symbols the constructor
// sets and to make Node throw its own errors for bad template arguments.
function detachedResponse() {
  const res = new ServerResponse({
    method: 'GET',
    httpVersionMajor: 1,
    httpVersionMinor: 1,
    headers: {},
  });
  // Node 26's _storeHeader() asks it: Node's own, never a wrapper (strict,
  // where a wrapper put there before the package was loaded hides it).
  if (nodeIsLenient !== undefined) res._isLenientHeaderValidation = nodeIsLenient ?? strictHeaderValidation;
  return res;
}

/** detachedResponse() with a chunked head, as _storeHeader() leaves it, for Node's write_() to find. */
function detachedChunkedResponse() {
  const res = detachedResponse();
  res._header = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n';
  res.chunkedEncoding = true;
  return res;
}

// Node 26's OutgoingMessage.prototype._isLenientHeaderValidation (an
// anonymous function: told by its source), null when it is not Node's,
// undefined on Node 18 to 24, which have none.
const nodeIsLenient = (() => {
  const fn = OutgoingMessage.prototype._isLenientHeaderValidation;
  if (fn === undefined) return undefined;
  return typeof fn === 'function' && functionSource.call(fn).includes('isLenientHeaderValidation(this)') ? fn : null;
})();

function strictHeaderValidation() {
  return false;
}

const probe = detachedResponse();
const kOutHeaders = findSymbol(probe, 'kOutHeaders');
const kRejectNonStandardBodyWrites = findSymbol(probe, 'kRejectNonStandardBodyWrites');
const kNeedDrain = findSymbol(probe, 'kNeedDrain');

// Set by the server on each response (not by the constructor): looked up on
// the first response that has it. A response no server made (a test
// framework's, light-my-request's) has none, and proves nothing.
let kUniqueHeaders;
function uniqueHeadersOf(res) {
  if (kUniqueHeaders === undefined) {
    kUniqueHeaders = findSymbol(res, 'kUniqueHeaders');
    if (kUniqueHeaders === undefined) return null;
  }
  return res[kUniqueHeaders];
}

/**
 * Throws what `res.writeHead(statusCode, headers)` throws for these
 * arguments, and returns normally when Node accepts them, without calling
 * any wrapper of writeHead(): Node's own writeHead() runs on a detached
 * response. When writeHead() was wrapped before this package was loaded
 * (an APM loaded first), Node's own cannot be reached, and a wrapper must
 * never see a response no server made (it may read `res.req.socket`, or
 * record it): then writeHead()'s own checks run in its order, the status
 * code's here and the header fields' in Node's own _storeHeader(), which
 * throws Node's errors (when that too was wrapped first, the header fields
 * are left to Node's writeHead() at each send(): the fast path steps aside
 * for a replaced _storeHeader()).
 *
 * @throws ERR_HTTP_INVALID_STATUS_CODE (RangeError), ERR_INVALID_CHAR
 *   (TypeError, a string `headers` is the reason phrase),
 *   ERR_INVALID_ARG_VALUE, ERR_INVALID_HTTP_TOKEN,
 *   ERR_HTTP_INVALID_HEADER_VALUE.
 */
function throwLikeWriteHead(statusCode, headers) {
  const res = detachedResponse();
  if (nodeWriteHead !== null && nodeStoreHeader !== null) {
    // (Its this._storeHeader(): Node's own, over a wrapper on the prototype.)
    res._storeHeader = nodeStoreHeader;
    nodeWriteHead.call(res, statusCode, headers);
    return;
  }
  const code = statusCode | 0;
  if (code < 100 || code > 999) {
    throw nodeStyleError(RangeError, 'ERR_HTTP_INVALID_STATUS_CODE', format('Invalid status code: %s', statusCode));
  }
  if (typeof headers === 'string') {
    // writeHead(statusCode, reasonPhrase): checkInvalidHeaderChar().
    if (INVALID_HEADER_CHAR.test(headers)) {
      throw nodeStyleError(TypeError, 'ERR_INVALID_CHAR', 'Invalid character in statusMessage');
    }
    return;
  }
  res.statusCode = code;
  // (A _storeHeader() wrapped before the package was loaded: Node's own is
  // out of reach, and every send() of the template is Node's, whose
  // writeHead() judges the header fields.)
  if (nodeStoreHeader !== null) {
    nodeStoreHeader.call(res, `HTTP/1.1 ${code} ${STATUS_CODES[code] || 'unknown'}\r\n`, headers);
  }
}

// Node's checkInvalidHeaderChar() (lib/_http_common.js).
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

/**
 * An error as Node's lib/internal/errors.js makes it: `name` the class's,
 * an own enumerable `code`, and the code in the stack's first line and in
 * String(err) (`RangeError [ERR_X]: message`).
 */
function nodeStyleError(Base, code, message) {
  const err = new Base(message);
  Object.defineProperty(err, 'name', { value: `${Base.name} [${code}]`, configurable: true, writable: true });
  // Reading the stack formats its first line, with the name above.
  void err.stack;
  delete err.name;
  err.code = code;
  Object.defineProperty(err, 'toString', {
    value() {
      return `${this.name} [${code}]: ${this.message}`;
    },
    configurable: true,
    writable: true,
  });
  return err;
}

// ---------------------------------------------------------------------------
// What differs between the Node versions the package runs on (18 to 26),
// found once by looking at the running Node.

/** Node's own net.Socket.prototype.write: a wrapped one must see the bytes. */
const socketWrite = require('node:net').Socket.prototype.write;

// Node 18's _storeHeader() closes the connection after removeHeader
// ('Connection'); Node 20 and later keep it alive when the request asked to.
// src/head.cc renders the later rule, so on Node 18 that case is Node's.
const REMOVED_CONNECTION_KEEPS_ALIVE =
  /_last\s*=\s*!this\.shouldKeepAlive/.test(OutgoingMessage.prototype._storeHeader.toString());

// matchHeader(): `_contentLength = +value` of the last Content-Length field
// (Node 20 and later); Node 18 keeps the value as given, a string.
// (Not known when _storeHeader() was wrapped before the package was
// loaded: then every head is Node's, NODE_RENDERS_HEAD, as the fast path
// steps aside for a replaced _storeHeader() anyway.)
const CONTENT_LENGTH_AS_NUMBER = (() => {
  if (nodeStoreHeader === null) return false;
  const res = detachedResponse();
  nodeStoreHeader.call(res, 'HTTP/1.1 200 OK\r\n', { 'Content-Length': '0' });
  return res._contentLength === 0;
})();

// Node 18's _storeHeader() differs from Node 20+ in its keep-alive and
// Content-Length rules, which src/head.cc renders. There Node renders every
// head itself (writeHead()/_implicitHeader()) and the addon writes it with
// the body: the write path gains, the head stays Node 18's own.
const NODE_RENDERS_HEAD = !REMOVED_CONNECTION_KEEPS_ALIVE || !CONTENT_LENGTH_AS_NUMBER;

// What a socket write that fails (EPIPE, ECONNRESET) adds to
// socket.bytesWritten, the same on Node 18 to 26 (src/stream_base.cc): a
// string whose storage fits in 16 KiB (3 bytes per UTF-16 unit in UTF-8,
// 1 in latin1 and ASCII) is tried from the stack and adds nothing when the
// try fails; a larger string, a Buffer and a writev() of several entries
// add their bytes before trying. STACK_WRITE_LIMIT: that size, in bytes.
const STACK_WRITE_LIMIT = 16 * 1024;

// Node 24 and later write a Content-Length body's last chunk alone, with
// end()'s finish callback (maybePrepareFinalChunk()): a string body after
// the head joined to it is one string write. Node 18 to 22 follow it with
// an empty write carrying the callback: the two leave as one writev(),
// whose failure counts its bytes.
const SENDS_FINAL_CHUNK_ALONE = nodeEnd !== null && /\bmaybePrepareFinalChunk\b/.test(nodeEnd.toString());

// A failed write of the pipelined batch (lib/pipeline.js) and of a request
// (lib/client.js, Node 18 to 22) counts its bytes where Node's own end()
// writes body and finish callback as one writev().
const FAILED_WRITE_COUNTED = !SENDS_FINAL_CHUNK_ALONE;

// Outgoing requests: on Node 26 the addon's path costs more instructions
// per request than Node's own req.end() (benchmark/instructions.js
// --requests, client-post: fastEnd +2.5 %, patchEnd +3.3 %; Node 20:
// -2.4 %, -3.1 %), and the bound is only 2.5 % below Node's. Node 24 ships
// the same outgoing-message changes, so from 24 on requests stay Node's:
// req.fastEnd() is Node's end() and patchEnd leaves req.end() alone.
const CLIENT_PATH_GAINS = Number(process.versions.node.split('.')[0]) < 24;

// Node 22 and later can collect the chunked writes of a corked response
// into one chunk (kChunkedBuffer) and write it at its uncork():
// NODE_COLLECTS_TICK_CHUNKS says when they do.
const kChunkedBuffer = findSymbol(probe, 'kChunkedBuffer');
const kChunkedLength = findSymbol(probe, 'kChunkedLength');
const kCorked = findSymbol(probe, 'corked');
const NODE_COMBINES_CHUNKS = kChunkedBuffer !== undefined;

/**
 * What Node's own write() corks for the tick of a write (write_() in
 * lib/_http_outgoing.js, before it frames the chunk): 'response' when it
 * calls `msg.cork()` (Node 24 and later), 'socket' when it calls
 * `msg.socket.cork()` (Node 18 to 22), null when it is not seen. write_()
 * is private to Node's module: the source of write() shows only the call
 * `write_(this, chunk, ...)`, and process.binding('natives'), which holds
 * the module's source, is deprecated (DEP0111, a warning under
 * --pending-deprecation) and refused under the permission model. So Node's
 * own write() (nodeWrite, recognized by its source) runs on a detached
 * response with a head until it corks: both corks throw, so nothing is
 * framed, sent or scheduled (write_() schedules the tick's uncork after it
 * corks).
 */
function corkOfWrite() {
  if (nodeWrite === null) return null;
  const res = detachedChunkedResponse();
  let corked = null;
  const stop = new Error('fast-response: the probe stops at the cork');
  const corking = (what) => () => {
    corked = what;
    throw stop;
  };
  res.cork = corking('response');
  res.socket = { writableCorked: 0, cork: corking('socket') };
  res._send = corking(null);
  try {
    nodeWrite.call(res, 'probe', 'latin1');
  } catch (err) {
    if (err !== stop) return null;
  }
  return corked;
}

/**
 * Whether Node's own write() collects the chunked writes of every tick into
 * the response's kChunkedBuffer (one chunk, sent by its uncork() when the
 * tick ends): Node 24 and later, whose write_() corks the response
 * (`msg.cork()`) for the tick. Node 22's write_() corks the socket, as Node
 * 18 and 20 do, and makes four _send() calls per chunk like them; it
 * collects only while a user's res.cork() holds the response (`msg[kCorked]
 * && msg._headerSent`). Node 18 and 20 collect nothing (no kChunkedBuffer).
 * Where this is true the package's write() is Node's (lib/stream.js: a
 * tick's chunks leave as one chunk there, not as the package's framed
 * ones); a Node with kChunkedBuffer whose write() corks anything else than
 * the socket, or is not recognized, counts as collecting: Node's write().
 */
const NODE_COLLECTS_TICK_CHUNKS = NODE_COMBINES_CHUNKS && (kCorked === undefined || corkOfWrite() !== 'socket');

/**
 * The callback Node's own write() collects into kChunkedBuffer for a
 * write() given none (write_()'s `nop`), or null when not seen (Node 18 to
 * 22 never collect an uncorked tick's writes; Node's write() not
 * recognized). Node's write() runs on a detached response with a head,
 * corked and with no socket, so that write_() collects the chunk and
 * corks, sends and schedules nothing (the probe's entry is its only
 * effect, on a response no one else holds).
 */
function collectedWithoutCallback() {
  if (!NODE_COLLECTS_TICK_CHUNKS || nodeWrite === null || kChunkedBuffer === undefined || kCorked === undefined) {
    return null;
  }
  const res = detachedChunkedResponse();
  res[kCorked] = 1;
  try {
    nodeWrite.call(res, 'probe', 'latin1');
  } catch {
    return null;
  }
  const buf = res[kChunkedBuffer];
  return Array.isArray(buf) && buf.length === 3 && buf[0] === 'probe' && typeof buf[2] === 'function' ? buf[2] : null;
}

/** Node 24 and later: write_()'s callback of a write() given none (collectedWithoutCallback()), or null. */
const NODE_WRITE_NOP = collectedWithoutCallback();

/**
 * Node's own OutgoingMessage.prototype.uncork (Node 22 and later: it sends
 * the tick's kChunkedBuffer as one chunk), or null.
 */
const nodeUncork = NODE_COMBINES_CHUNKS && kChunkedLength !== undefined && kCorked !== undefined ?
  nodesOwnOrNull(OutgoingMessage.prototype.uncork, 'uncork', ['kChunkedBuffer', 'crlf_buf']) : null;

/**
 * Node's own OutgoingMessage.prototype.cork (kCorked++ and the socket's
 * cork()), or null: write_() calls the response's cork() once, at the
 * first write of a tick (lib/stream.js writeCollected() corks in its place
 * only where it is Node's).
 */
const nodeCork = kCorked !== undefined ? nodesOwnOrNull(OutgoingMessage.prototype.cork, 'cork', ['.cork()']) : null;

// Node 18's socket calls a write's callback with no argument when it is
// the only write of an uncork, and with one (undefined) when several go out
// together (writev); Node 20 and later pass `null` either way. Node's own
// res.write() of a chunked body is always several writes (size line, CRLF,
// data, CRLF): the package's one write then passes its one argument too.
const SINGLE_WRITE_CALLBACK_WITHOUT_ARGUMENT = Number(process.versions.node.split('.')[0]) < 20;

// ---------------------------------------------------------------------------
// The client side (lib/client.js): outgoing requests.

const { ClientRequest } = http;

/**
 * Node's own OutgoingMessage.prototype._flushOutput (it writes what a
 * message queued before it had its socket), or null: then a request queued
 * before its socket is always written by it.
 */
const nodeFlushOutput = nodesOwnOrNull(OutgoingMessage.prototype._flushOutput, '_flushOutput',
                                       ['this.outputData', 'socket.cork()', 'socket.write(data, encoding, callback)']);
/** Node's own ClientRequest.prototype._implicitHeader, or null (then Node renders every request head). */
const nodeRequestImplicitHeader = nodesOwnOrNull(ClientRequest.prototype._implicitHeader, '_implicitHeader',
                                                 ["this._storeHeader(this.method + ' ' + this.path + ' HTTP/1.1\\r\\n'"]);

/**
 * Defines method `name` of a prototype (install(), lib/index.js and
 * lib/client.js) as `value`, writable and configurable. A method the
 * prototype owns keeps its attributes (Node's
 * ServerResponse.prototype.writeHead is enumerable, as it was assigned);
 * a new one (fastEnd, fastWrite, and end() or uncork() over
 * OutgoingMessage.prototype's) is not enumerable. Only the value changes
 * then: V8 holds a prototype one of whose properties changed its
 * attributes as a dictionary (slow properties) from then on (writeHead()
 * defined non-enumerable under install({ patchEnd: true }) did so): Node's
 * `new ServerResponse()` per request and the prototype's method lookups
 * slow down (README, "The prototype's attributes are kept": 4-6 % of the
 * instructions per response under callgrind).
 *
 * @param {object} object A prototype.
 * @param {string} name
 * @param {Function} value
 */
function defineMethod(object, name, value) {
  const own = Object.getOwnPropertyDescriptor(object, name);
  Object.defineProperty(object, name, {
    __proto__: null,
    configurable: true,
    writable: true,
    enumerable: own !== undefined && 'value' in own ? own.enumerable : false,
    value,
  });
}

/**
 * A replaced end() (or write()) gets the arguments `msg.end(...)` would have
 * got, without trailing undefined ones: wrappers may look at
 * `arguments.length`.
 */
function callOwn(own, msg, data, encoding, callback) {
  if (callback !== undefined) return own.call(msg, data, encoding, callback);
  if (encoding !== undefined) return own.call(msg, data, encoding);
  if (data !== undefined) return own.call(msg, data);
  return own.call(msg);
}

// The replaced end()s and write()s that the package's fastEnd(),
// fastWrite() and req.fastEnd() called and that are running now, innermost
// last: { msg, name, fn }. Kept here, not on the message (no property of
// the package's shows on it); module state, so one list per environment.
const runningReplaced = [];

/**
 * The replaced `name` method ('end' or 'write') of `msg` that the package
 * called and that is running now, the innermost: it called the package
 * back (`res.end = function (data) { return this.fastEnd(data); }`), which
 * then goes to what it stands over (methodBeneath()) instead of calling it
 * again, where it recursed until the stack overflowed. Undefined when none
 * is running.
 */
function replacedRunning(msg, name) {
  for (let i = runningReplaced.length - 1; i >= 0; i--) {
    const entry = runningReplaced[i];
    if (entry.msg === msg && entry.name === name) return entry.fn;
  }
  return undefined;
}

/** callOwn() of `fn`, the replaced `name` method of `msg`, listed as running while it runs (replacedRunning()). */
function callReplaced(fn, msg, name, data, encoding, callback) {
  runningReplaced.push({ msg, name, fn });
  try {
    return callOwn(fn, msg, data, encoding, callback);
  } finally {
    runningReplaced.pop();
  }
}

/**
 * The `name` method that `fn` stands over on `msg`: the next function up
 * the prototype chain after the object that holds `fn` (`msg` itself for a
 * replacement on the instance; Node's own, an agent's wrapper or the
 * package's patch). Undefined when there is none, or `fn` is not on the
 * chain.
 */
function methodBeneath(msg, name, fn) {
  let holder = msg;
  while (holder !== null && Object.getOwnPropertyDescriptor(holder, name)?.value !== fn) {
    holder = Object.getPrototypeOf(holder);
  }
  if (holder === null) return undefined;
  for (let proto = Object.getPrototypeOf(holder); proto !== null; proto = Object.getPrototypeOf(proto)) {
    const value = Object.getOwnPropertyDescriptor(proto, name)?.value;
    if (typeof value === 'function') return value;
  }
  return undefined;
}

/**
 * The `name` method ('end', 'write') a call of the package's fastEnd() /
 * fastWrite() on `msg` goes through: the message's own, or, inside a
 * replacement the package called (replacedRunning()), what that
 * replacement stands over.
 */
function methodToCall(msg, name) {
  const running = replacedRunning(msg, name);
  if (running !== undefined) return methodBeneath(msg, name, running);
  // A load of its own for each name (protoWrite() above): `msg[name]`, one
  // load for both, read as megamorphic in every caller, about 260
  // instructions per call (Node 26.12.1 under callgrind, res.fastWrite()
  // eight times in a tick: 3,930 -> 1,793 per response in V8's
  // KeyedLoadIC_Megamorphic).
  if (name === 'end') return msg.end;
  return name === 'write' ? msg.write : msg[name];
}

// The package's end()s that uninstall() retired (patchedEnd()), each to
// { beneath, descriptor } as it had them: a later patch looks through one
// it finds in place (a wrapper that put it back on unwrapping).
const retiredEnds = new WeakMap();

/**
 * The end() that install({ patchEnd: true }) defines on `proto`
 * (http.ServerResponse's, http.ClientRequest's), standing over the end() in
 * effect there when patchEnd was turned on: one someone defined on `proto`
 * itself (an APM agent's wrapper), or else the inherited one,
 * OutgoingMessage.prototype.end, looked up at each call (a wrapper put
 * there later is seen). Over Node's own end() it is `fast(msg, data,
 * encoding, callback)`, the package's path; over anyone else's it calls
 * that one, with the arguments `msg.end(...)` got. Each
 * install({ patchEnd: true }) makes its own, and `retire()` (uninstall())
 * makes it call what it stands over from then on: one that uninstall()
 * leaves in place under a later wrapper (put back, it would drop the
 * wrapper) is what it stood over again, a later patch standing over that
 * wrapper never calls itself, and one that finds it in place again looks
 * through it (and puts back what that one would have).
 *
 * @param {object} proto
 * @param {(msg: object, data: unknown, encoding: unknown, callback: unknown) => unknown} fast
 * @returns {{ method: Function, descriptor: PropertyDescriptor | undefined,
 *             overNodes: () => boolean, retire: () => void }}
 *   `method` the end() to define; `descriptor` the own property `end` of
 *   `proto` for uninstall() to put back (undefined: none); `overNodes()`
 *   whether it is the package's path now (active, over Node's own end()).
 */
function patchedEnd(proto, fast) {
  const parent = Object.getPrototypeOf(proto);
  let descriptor = Object.getOwnPropertyDescriptor(proto, 'end');
  let beneath = descriptor !== undefined ? proto.end : null;
  for (let retired = retiredEnds.get(beneath); retired !== undefined; retired = retiredEnds.get(beneath)) {
    ({ beneath, descriptor } = retired);
  }
  let active = true;
  function patchedEndMethod(data, encoding, callback) {
    const below = beneath === null ? parent.end : beneath;
    if (below === nodeEnd && active && nodeEnd !== null) return fast(this, data, encoding, callback);
    return callOwn(below, this, data, encoding, callback);
  }
  return {
    method: patchedEndMethod,
    descriptor,
    overNodes: () => active && nodeEnd !== null && (beneath === null ? parent.end : beneath) === nodeEnd,
    retire() {
      active = false;
      retiredEnds.set(patchedEndMethod, { beneath, descriptor });
    },
  };
}

/**
 * uninstall(): puts back property `name` of `object` as
 * Object.getOwnPropertyDescriptor() gave it before install() (undefined:
 * there was none).
 */
function restoreProperty(object, name, descriptor) {
  if (descriptor === undefined) delete object[name];
  else Object.defineProperty(object, name, descriptor);
}

// Every method of Node's is found: the realm goes (isNodesOwn() is not
// called again).
functionSource = null;

module.exports = {
  NODE_WRITE_NOP,
  defineMethod,
  restoreProperty,
  callOwn,
  callReplaced,
  methodToCall,
  patchedEnd,
  ClientRequest,
  nodeFlushOutput,
  nodeRequestImplicitHeader,
  SINGLE_WRITE_CALLBACK_WITHOUT_ARGUMENT,
  nodeWrite,
  sendsThroughNode,
  defaultEncodingIsUtf8,
  isNodesWrite,
  setPackageWrite,
  setPackageUncork,
  isNodesUncork,
  kNeedDrain,
  NODE_COMBINES_CHUNKS,
  NODE_COLLECTS_TICK_CHUNKS,
  kChunkedBuffer,
  kChunkedLength,
  kCorked,
  nodeUncork,
  nodeCork,
  CLIENT_PATH_GAINS,
  socketWrite,
  FAILED_WRITE_COUNTED,
  SENDS_FINAL_CHUNK_ALONE,
  STACK_WRITE_LIMIT,
  REMOVED_CONNECTION_KEEPS_ALIVE,
  CONTENT_LENGTH_AS_NUMBER,
  NODE_RENDERS_HEAD,
  http,
  ServerResponse,
  OutgoingMessage,
  STATUS_CODES,
  nodeEnd,
  nodeWriteHead,
  isNodesHead,
  setPackageWriteHead,
  nodeStoreHeader,
  nodeImplicitHeader,
  isNodesEnd,
  setPackageEnd,
  kOutHeaders,
  kRejectNonStandardBodyWrites,
  uniqueHeadersOf,
  throwLikeWriteHead,
};
