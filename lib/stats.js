'use strict';

// stats(): this thread's counts of fast writes and of calls that stepped
// aside, by reason (lib/reasons.js). With NODE_DEBUG=fast-response (Node's
// util.debuglog), the first call that steps aside for each reason is logged
// too; unset, that costs one boolean per fallback.

const { debuglog } = require('node:util');
const { REASONS } = require('./reasons');
const { binding } = require('./binding');

const debug = debuglog('fast-response');
const DEBUG = debug.enabled;
let logged = { __proto__: null };

let fastWrites = 0;
let partialWrites = 0;
let chunkWrites = 0;
let heads = 0;
let framedUncorks = 0;
let joinedUncorks = 0;
let fallbacks = 0;
let reasons = { __proto__: null };

/** A response whose bytes all went out with one writev(2). */
function countFast() {
  fastWrites++;
}

/** A res.write() whose chunk the addon framed. */
function countWrite() {
  chunkWrites++;
}

/** A writeHead() whose head the addon rendered (lib/write-head.js). */
function countHead() {
  heads++;
}

/**
 * An uncork() whose collected chunk (Node 22 and later: kChunkedBuffer)
 * the package sent as one framed write (`framed` true) or with runs of its
 * strings joined (lib/chunked-buffer.js).
 */
function countUncork(framed) {
  if (framed) framedUncorks++;
  else joinedUncorks++;
}

/** A response whose rest was handed to socket.write(). */
function countPartial() {
  partialWrites++;
}

/**
 * A call that went to Node's own code, and why (a name of lib/reasons.js);
 * `res` and `data`, the response and the body given, for the debug log.
 */
function countFallback(reason, res, data) {
  fallbacks++;
  reasons[reason] = (reasons[reason] || 0) + 1;
  if (DEBUG && logged[reason] === undefined) logFirst(reason, res, data);
}

function logFirst(reason, res, data) {
  logged[reason] = true;
  const status = res !== null && typeof res === 'object' ? res.statusCode : undefined;
  const body = data === undefined || data === null || data === '' ? 'no body' :
    typeof data === 'string' || data instanceof Uint8Array ? `a ${data.length}-${typeof data === 'string' ? 'character' : 'byte'} body` :
      `a body of type ${typeof data}`;
  debug('steps aside to Node: %s (%s); status %s, %s; logged once per reason', reason,
        REASONS[reason] || 'unregistered', status, body);
}

// Outgoing requests (lib/client.js), counted apart from responses:
// stats().requests.
let requestFast = 0;
let requestPartial = 0;
let requestFallback = 0;
let requestReasons = { __proto__: null };
let loggedRequest = { __proto__: null };

/** A request whose head and body all went out with one writev(2). */
function countRequestFast() {
  requestFast++;
}

/** A request whose rest was handed to socket.write(). */
function countRequestPartial() {
  requestPartial++;
}

/**
 * A request written by Node's own code, and why (a name of
 * lib/reasons.js); `req` and `data` for the debug log.
 */
function countRequestFallback(reason, req, data) {
  requestFallback++;
  requestReasons[reason] = (requestReasons[reason] || 0) + 1;
  if (DEBUG && loggedRequest[reason] === undefined) {
    loggedRequest[reason] = true;
    const method = req !== null && typeof req === 'object' ? req.method : undefined;
    debug('request steps aside to Node: %s (%s); %s %s, %s; logged once per reason', reason,
          REASONS[reason] || 'unregistered', method, req && req.path, describeBody(data));
  }
}

function describeBody(data) {
  return data === undefined || data === null || data === '' || typeof data === 'function' ? 'no body' :
    typeof data === 'string' || data instanceof Uint8Array ? `a ${data.length}-${typeof data === 'string' ? 'character' : 'byte'} body` :
      `a body of type ${typeof data}`;
}

/** Logs (NODE_DEBUG=fast-response) what install() found. */
function logInstall(native, loadError, patchEnd) {
  if (!DEBUG) return;
  if (native) debug('install(%s): the native addon is loaded', patchEnd ? '{ patchEnd: true }' : '');
  else debug('install(%s): the native addon did not load, every call is Node\'s own: %s', patchEnd ? '{ patchEnd: true }' : '', loadError && loadError.message);
}

// The addon's writev(2) calls and bytes (its own counters, this
// environment's) at the last resetStats().
let writevBase = [0, 0];

function writevCounts() {
  return binding === null ? [0, 0] : binding.writevCounts();
}

function stats() {
  const [calls, bytes] = writevCounts();
  return {
    fast: fastWrites,
    partial: partialWrites,
    writes: chunkWrites,
    heads,
    uncorks: { framed: framedUncorks, joined: joinedUncorks },
    fallback: fallbacks,
    reasons: { ...reasons },
    writev: { calls: calls - writevBase[0], bytes: bytes - writevBase[1] },
    requests: {
      fast: requestFast,
      partial: requestPartial,
      fallback: requestFallback,
      reasons: { ...requestReasons },
    },
  };
}

function resetStats() {
  writevBase = writevCounts();
  fastWrites = 0;
  partialWrites = 0;
  chunkWrites = 0;
  heads = 0;
  framedUncorks = 0;
  joinedUncorks = 0;
  fallbacks = 0;
  reasons = { __proto__: null };
  logged = { __proto__: null };
  requestFast = 0;
  requestPartial = 0;
  requestFallback = 0;
  requestReasons = { __proto__: null };
  loggedRequest = { __proto__: null };
}

module.exports = {
  countFast, countPartial, countWrite, countHead, countUncork, countFallback, countRequestFast, countRequestPartial, countRequestFallback,
  logInstall, stats, resetStats,
};
