'use strict';

// What differs between the Node versions the suites run on (18 to 26), in
// one place: Node's own rules, probed on socketless responses (not read from
// a version number), and what they make fastResponse.stats() say. Bytes,
// events, errors and state need nothing of the kind: the differential
// harness compares them with the running Node's own res.end().
//
// On Node 18 the package lets Node render every head (writeHead(),
// _implicitHeader()) and the addon writes it with the body in one writev
// (lib/node-internals.js NODE_RENDERS_HEAD). Such a response counts as `fast`; the
// fallbacks that src/head.cc's rendering rules cause (a field it does not
// render, a Keep-Alive value it does not print, send()'s own path) do not
// happen there, and a head that Node refuses throws before anything is
// counted. The expectations below say exactly what stats() says in each
// mode; test/end.test.js checks that lib/node-internals.js picks the mode these
// probes call for.

const { ServerResponse } = require('node:http');

function probeResponse() {
  return new ServerResponse({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} });
}

/** Node 18: after removeHeader('Connection') _storeHeader() closes the connection. */
const REMOVED_CONNECTION_CLOSES = (() => {
  const res = probeResponse();
  res.removeHeader('Connection');
  res.writeHead(200, { 'Content-Length': '0' });
  return res._last === true;
})();

/** Node 18: `_contentLength` keeps a Content-Length field's value as given (a string). */
const CONTENT_LENGTH_KEPT_AS_GIVEN = (() => {
  const res = probeResponse();
  res.writeHead(200, { 'Content-Length': '0' });
  return res._contentLength !== 0;
})();

/**
 * Node 18: writeHead(status, headers) without setHeader() fields renders
 * again over a head already rendered (or sent); Node 20 and later throw
 * ERR_HTTP_HEADERS_SENT.
 */
const WRITEHEAD_RERENDERS = (() => {
  const res = probeResponse();
  res.writeHead(200, { 'Content-Length': '0' });
  try {
    res.writeHead(201, { 'Content-Length': '0' });
    return true;
  } catch (err) {
    if (err.code !== 'ERR_HTTP_HEADERS_SENT') throw err;
    return false;
  }
})();

/**
 * Whether Node renders every head (its rules differ from src/head.cc's,
 * which renders Node 20's): what lib/node-internals.js NODE_RENDERS_HEAD must be.
 */
const NODE_RENDERS_HEAD = REMOVED_CONNECTION_CLOSES || CONTENT_LENGTH_KEPT_AS_GIVEN;

function checked(expectation, what) {
  if (expectation === null || typeof expectation !== 'object' ||
      !Number.isInteger(expectation.fast) || expectation.fallback === null ||
      typeof expectation.fallback !== 'object') {
    throw new TypeError(`${what}: give { fast, fallback } exactly`);
  }
  return { fast: expectation.fast, fallback: expectation.fallback };
}

/**
 * differential()'s `fast` and `fallback` options for a case whose counts
 * depend on who renders the head: `addon` where src/head.cc renders it
 * (Node 20 and later), `node` where Node renders every head (Node 18). Both
 * are required and exact.
 *
 * @param {{ addon: { fast: number, fallback: object },
 *           node: { fast: number, fallback: object } }} byRenderer
 * @returns {{ fast: number, fallback: object }}
 */
function byHeadRenderer({ addon, node }) {
  const a = checked(addon, 'addon');
  const n = checked(node, 'node');
  return NODE_RENDERS_HEAD ? n : a;
}

/**
 * end() on a head that src/head.cc does not render (a Content-Disposition
 * Node re-encodes, Transfer-Encoding, a removed Content-Length, uniqueHeaders
 * arrays, a Keep-Alive max= it does not print): Node's end(), counted under
 * `reason`. Where Node renders every head, Node renders this one too and the
 * addon writes it with the body: fast.
 */
function headRuleFallback(reason) {
  return byHeadRenderer({
    addon: { fast: 0, fallback: { [reason]: 1 } },
    node: { fast: 1, fallback: {} },
  });
}

/**
 * end() on a head Node refuses (status code, statusMessage): the package
 * counts `reason` and lets Node's end() throw. Where Node renders every
 * head, its writeHead() throws first, before anything is counted.
 */
function refusedHead(reason) {
  return byHeadRenderer({
    addon: { fast: 0, fallback: { [reason]: 1 } },
    node: { fast: 0, fallback: {} },
  });
}

/**
 * end() after removeHeader('Connection'). Where Node closes the connection
 * then (Node 18), lib/gate.js leaves the call to Node's end(), counted as
 * 'removed-connection'; elsewhere the fast path keeps the connection alive.
 */
function removedConnection() {
  return REMOVED_CONNECTION_CLOSES ?
    { fast: 0, fallback: { 'removed-connection': 1 } } :
    { fast: 1, fallback: {} };
}

/**
 * send() / template().send() handing the response to the response's own
 * writeHead() + end(), counted under `reason`, with `fast` writes after it
 * (the body of a head Node rendered still goes out fast). Where Node renders
 * every head that is send()'s only path, not a fallback: send() counts
 * nothing, and end() counts the body's write (the same `fast`).
 */
function sendNodePath(reason, fast) {
  return byHeadRenderer({
    addon: { fast, fallback: { [reason]: 1 } },
    node: { fast, fallback: {} },
  });
}

module.exports = {
  REMOVED_CONNECTION_CLOSES,
  CONTENT_LENGTH_KEPT_AS_GIVEN,
  WRITEHEAD_RERENDERS,
  NODE_RENDERS_HEAD,
  byHeadRenderer,
  headRuleFallback,
  refusedHead,
  removedConnection,
  sendNodePath,
};
