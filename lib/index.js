'use strict';

/**
 * fast-response: Node's `res.end(data)` for http.ServerResponse, with the
 * response head rendered natively and head and body sent with one writev(2).
 * Same bytes on the wire, same events, same errors as Node's own end();
 * whatever the fast path does not cover goes to Node's own code.
 *
 * @module fast-response
 */

const { ServerResponse, nodeEnd, isNodesEnd, setPackageEnd } = require('./node-internals');
const { loadError } = require('./binding');
const { end } = require('./end');
const { send, template, json } = require('./send');
const statistics = require('./stats');
const { R } = require('./reasons');

let installed = null;

/** Whether the native addon loaded (false: every call takes Node's path). */
const native = loadError === null;

/**
 * Defines `ServerResponse.prototype.fastEnd(data[, encoding][, callback])`,
 * and with `{ patchEnd: true }` also routes every `res.end()` of every
 * http.ServerResponse through the fast path (Express, Fastify, Koa gain
 * without code changes). Calling it again while installed changes nothing
 * but can turn `patchEnd` on.
 *
 * @param {{ patchEnd?: boolean }} [options]
 * @returns {() => void} `uninstall`: restores what was there before.
 * @throws {TypeError} ERR_INVALID_ARG_TYPE when `options` is not an object.
 */
function install(options) {
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw invalidArgType('options', 'an object', options);
  }
  const patchEnd = options !== undefined && options.patchEnd === true;
  statistics.logInstall(native, loadError, patchEnd);
  const proto = ServerResponse.prototype;
  if (installed === null) {
    // Own property descriptors (or undefined): uninstall() puts back exactly
    // what was there, attributes included.
    installed = {
      fastEnd: Object.getOwnPropertyDescriptor(proto, 'fastEnd'),
      end: Object.getOwnPropertyDescriptor(proto, 'end'),
      // The end() in effect before install(), own or inherited.
      previousEnd: proto.end,
      patchedEnd: false,
    };
    Object.defineProperty(proto, 'fastEnd', {
      __proto__: null,
      configurable: true,
      writable: true,
      enumerable: false,
      value: function fastEnd(data, encoding, callback) {
        return fastResponseEnd(this, data, encoding, callback);
      },
    });
  }
  if (patchEnd && !installed.patchedEnd) {
    installed.patchedEnd = true;
    // Over Node's own end() the patch is the package's fast path; over
    // anyone else's it hands every call to that end() (patchedEnd()).
    setPackageEnd(installed.previousEnd === nodeEnd ? patchedEndMethod : null);
    Object.defineProperty(proto, 'end', {
      __proto__: null,
      configurable: true,
      writable: true,
      enumerable: false,
      value: patchedEndMethod,
    });
  }
  return uninstall;
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
 * The fast path renders the head natively and writes head and body with one
 * writev(2) on the socket; a Buffer body is not copied. It steps aside for
 * Node's own end() when the response is not the socket's current one, the
 * socket is TLS, corked or has queued writes, the head is already sent, the
 * body is chunked or absent, `strictContentLength` is set, and in the other
 * cases stats() names. A response whose `end` was replaced (compression
 * middleware, the HTTP/2 compatibility API) is ended with its own `end`.
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
  const own = res.end;
  // Only Node's own end() (or this package's patch of it) is taken over; an
  // end() wrapped by anyone else (compression, APM, the HTTP/2 compatibility
  // API), before or after this package was loaded, is called, so that it
  // sees the call.
  if (!isNodesEnd(own) && typeof own === 'function') {
    // An HTTP/2 compatibility response (or any other kind) has its own end.
    statistics.countFallback(res instanceof ServerResponse ? R.END_REPLACED : R.NOT_HTTP1, res, data);
    return callOwnEnd(own, res, data, encoding, callback);
  }
  return end(res, data, encoding, callback);
}

// The replaced end() gets the arguments res.end(...) would have got, without
// trailing undefined ones: wrappers may look at `arguments.length`.
function callOwnEnd(own, res, data, encoding, callback) {
  if (callback !== undefined) return own.call(res, data, encoding, callback);
  if (encoding !== undefined) return own.call(res, data, encoding);
  if (data !== undefined) return own.call(res, data);
  return own.call(res);
}

function patchedEndMethod(data, encoding, callback) {
  return patchedEnd(this, data, encoding, callback);
}

// `res.end()` under install({ patchEnd: true }): end() with no data is
// Node's own; everything else is fastResponse.end().
function patchedEnd(res, data, encoding, callback) {
  // An end() someone else wrapped before install() keeps its wrapper.
  const previous = installed !== null ? installed.previousEnd : nodeEnd;
  if ((previous !== nodeEnd || nodeEnd === null) && typeof previous === 'function') {
    return callOwnEnd(previous, res, data, encoding, callback);
  }
  if (!data || typeof data === 'function') {
    return nodeEnd.call(res, data, encoding, callback);
  }
  return end(res, data, encoding, callback);
}

/**
 * Undoes install(): removes `fastEnd` and restores `end` as they were.
 * Does nothing when not installed.
 */
function uninstall() {
  if (installed === null) return;
  const proto = ServerResponse.prototype;
  restore(proto, 'fastEnd', installed.fastEnd);
  if (installed.patchedEnd) restore(proto, 'end', installed.end);
  setPackageEnd(null);
  installed = null;
}

function restore(object, name, descriptor) {
  if (descriptor === undefined) delete object[name];
  else Object.defineProperty(object, name, descriptor);
}

/**
 * Counts of this thread's calls since start (or resetStats()):
 * `fast` responses written with one writev(2), `partial` ones whose rest was
 * handed to socket.write() (full socket buffer), `fallback` calls that went
 * to Node's own code, and `reasons`: fallbacks by reason
 * ('tls', 'head-sent', 'chunked', 'socket-busy', 'not-current', ...).
 *
 * @returns {{ fast: number, partial: number, fallback: number,
 *             reasons: Record<string, number> }}
 */
function stats() {
  return statistics.stats();
}

function invalidArgType(name, expected, actual) {
  const err = new TypeError(
    `The "${name}" argument must be ${expected}. Received ${actual === null ? 'null' : typeof actual}`);
  err.code = 'ERR_INVALID_ARG_TYPE';
  return err;
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
