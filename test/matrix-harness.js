'use strict';

const { withTimeout, statsDelta } = require('./helpers/raw-http');

// The compact harness of test/matrix.test.js and test/edges.test.js (not a
// test file itself). A raw `net` client sends exact request bytes and keeps
// every byte it receives; a small response scanner only decides when the
// exchange is over, the comparison is on the raw bytes (Date values masked).
// Every wait is bounded: a stuck exchange fails, it never hangs.

const http = require('node:http');
const net = require('node:net');

/**
 * Upper bound of one client exchange (FAST_RESPONSE_TEST_TIMEOUT_MS: a
 * lower one, for scripts/mutation-check.js, where hanging mutants are many).
 */
const EXCHANGE_TIMEOUT_MS = Number(process.env.FAST_RESPONSE_TEST_TIMEOUT_MS) || 20000;

/**
 * FAST_RESPONSE_TEST_BAIL=1 (scripts/mutation-check.js): stop at the first
 * failure; what is not run then fails too, it is never skipped.
 */
const BAIL = process.env.FAST_RESPONSE_TEST_BAIL === '1';

/**
 * The sentinel request: sent on a connection the server keeps open once all
 * expected responses are in, so that the server closes it and any stray
 * byte it wrote after them (a body sent for HEAD, say) arrives before the
 * sentinel's own response. Its handler is the same on both sides.
 */
const SENTINEL_PATH = '/__sentinel';
const SENTINEL = `GET ${SENTINEL_PATH} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`;

const DATE_FIELD = Buffer.from('\r\nDate: ', 'latin1');
const DATE_LENGTH = 29; // IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT"

/** A copy of `buf` with every `Date:` value (29 bytes) replaced by X's. */
function maskDateBytes(buf) {
  let at = buf.indexOf(DATE_FIELD);
  if (at === -1) return buf;
  const out = Buffer.from(buf);
  while (at !== -1) {
    const from = at + DATE_FIELD.length;
    if (out.toString('latin1', from + DATE_LENGTH, from + DATE_LENGTH + 2) === '\r\n') {
      out.fill(0x58, from, from + DATE_LENGTH);
    }
    at = out.indexOf(DATE_FIELD, from);
  }
  return out;
}

/** `_header` (or any head text) with the Date value masked. */
function maskDate(text) {
  if (typeof text !== 'string') return text;
  return text.replace(/(^|\r\n)(date): [^\r\n]*\r\n/gi, '$1$2: <masked>\r\n');
}

/** What identifies an error in a comparison. */
function errorInfo(err) {
  if (err === null || err === undefined) return err;
  if (!(err instanceof Error)) return { notAnError: String(err) };
  return { class: err.constructor.name, code: err.code, message: err.message };
}

/** The response state both sides must agree on. */
function snapshot(res) {
  return {
    headersSent: res.headersSent,
    writableEnded: res.writableEnded,
    writableFinished: res.writableFinished,
    finished: res.finished,
    statusCode: res.statusCode,
    statusMessage: res.statusMessage,
    header: maskDate(res._header),
    headerSent: res._headerSent,
    contentLength: res._contentLength,
    last: res._last,
    shouldKeepAlive: res.shouldKeepAlive,
    chunkedEncoding: res.chunkedEncoding,
    hasBody: res._hasBody,
    // What matchHeader() changes for the fields it sees.
    removedConnection: res._removedConnection,
    removedContLen: res._removedContLen,
    removedTE: res._removedTE,
    defaultKeepAlive: res._defaultKeepAlive,
    destroyed: res.destroyed,
  };
}


/**
 * Scans received bytes for the responses to `methods` (one final response
 * per request; 1xx heads are skipped). Returns `{ done, keepAlive }` once
 * all are complete (`keepAlive`: the last one says `Connection: keep-alive`,
 * so the server keeps the connection), `{ done: false, needed }` while
 * waiting (`needed`: bytes required before another scan is useful), or
 * `{ done: false, untilClose: true }` when only the server's close can end
 * the exchange (a close-delimited body, bytes that are not a response).
 */
function scanResponses(buf, methods) {
  let pos = 0;
  let answered = 0;
  let lastHead = '';
  while (answered < methods.length) {
    const end = buf.indexOf('\r\n\r\n', pos, 'latin1');
    if (end === -1) return { done: false, needed: buf.length + 1 };
    const head = buf.toString('latin1', pos, end + 4);
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
    if (m === null) return { done: false, untilClose: true };
    const status = Number(m[1]);
    pos = end + 4;
    if (status >= 100 && status <= 199) continue;
    const method = methods[answered];
    if (method === 'HEAD' || status === 204 || status === 304) {
      // no body
    } else if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) {
      for (;;) {
        const lineEnd = buf.indexOf('\r\n', pos, 'latin1');
        if (lineEnd === -1) return { done: false, needed: buf.length + 1 };
        const size = parseInt(buf.toString('latin1', pos, lineEnd), 16);
        if (Number.isNaN(size)) return { done: false, untilClose: true };
        if (size === 0) {
          // No trailers in these tests: "0\r\n\r\n".
          if (buf.length < lineEnd + 4) return { done: false, needed: lineEnd + 4 };
          pos = lineEnd + 4;
          break;
        }
        const next = lineEnd + 2 + size + 2;
        if (next > buf.length) return { done: false, needed: next };
        pos = next;
      }
    } else {
      const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (cl === null) return { done: false, untilClose: true };
      const next = pos + Number(cl[1]);
      if (next > buf.length) return { done: false, needed: next };
      pos = next;
    }
    answered++;
    lastHead = head;
  }
  return { done: true, keepAlive: /\r\nconnection: keep-alive\r\n/i.test(lastHead) };
}

/** The methods of the requests in `text`, in order (bodies without request lines). */
function requestMethods(text) {
  const methods = [];
  const re = /(?:^|\r\n)([A-Z]+) \S+ HTTP\/1\.[01]\r\n/g;
  let m;
  while ((m = re.exec(text)) !== null) methods.push(m[1]);
  return methods;
}

/**
 * Connects to 127.0.0.1:`port`, writes `request` (a string or Buffer, all
 * pipelined requests in one write), reads until the server closes the
 * connection. Resolves `{ bytes, end, sentinel }`: `bytes` with Date values
 * masked, `end` 'end' or 'error:<code>', `sentinel` whether it was sent.
 *
 * `options.methods`: the request methods, in order (for the scanner;
 *   default: read from the request text).
 * `options.sequence`: requests sent one after another instead, each once
 *   the previous response is complete (only while they say keep-alive).
 * `options.followUp`: what the client does once all responses are in and
 *   the last says keep-alive: 'sentinel' (default) sends the sentinel
 *   request, 'half-close' ends the client's side (the server then closes),
 *   'none' only reads until the server closes; 'half-close-always' ends
 *   the client's side once the responses are in whatever they say (as a
 *   client does on `Connection: close`, which Node's server does not
 *   always follow by closing: maxRequestsPerSocket).
 * `options.onConnect(socket)`: replaces the write of `request`.
 * `options.onData(socket, bytes)`: called with all bytes received so far.
 */
function exchange(port, request, options = {}) {
  const sequence = options.sequence || [request];
  let sent = 1;
  const methodsOf = (n) => options.methods || (sequence[0] === undefined ? ['GET'] :
    requestMethods(sequence.slice(0, n).map((r) => Buffer.from(r).toString('latin1')).join('')));
  let methods = methodsOf(1);
  const timeoutMs = options.timeoutMs || EXCHANGE_TIMEOUT_MS;
  const followUp = options.followUp || 'sentinel';
  return new Promise((resolve, reject) => {
    const chunks = [];
    let received = 0;
    let needed = 0;
    let scanning = followUp !== 'none' || sequence.length > 1;
    let sentinel = false;
    let settled = false;
    const socket = net.connect({ port, host: '127.0.0.1' });
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      socket.destroy();
      const got = maskDateBytes(Buffer.concat(chunks)).toString('latin1');
      reject(new Error(`client timed out after ${timeoutMs} ms; received ` +
        `${received} bytes: ${JSON.stringify(got.slice(0, 600))}`));
    }, timeoutMs);
    const finish = (end) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ bytes: maskDateBytes(Buffer.concat(chunks, received)), end, sentinel });
    };
    socket.on('connect', () => {
      if (options.onConnect) options.onConnect(socket);
      else socket.write(sequence[0]);
    });
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      received += chunk.length;
      if (options.onData) options.onData(socket, Buffer.concat(chunks, received));
      if (!scanning || received < needed) return;
      const r = scanResponses(Buffer.concat(chunks, received), methods);
      if (!r.done) {
        if (r.untilClose) scanning = false;
        else needed = r.needed;
        return;
      }
      if (r.keepAlive && sent < sequence.length) {
        socket.write(sequence[sent++]);
        methods = methodsOf(sent);
        needed = 0;
        return;
      }
      scanning = false;
      if (r.keepAlive && followUp === 'sentinel') {
        sentinel = true;
        socket.write(SENTINEL);
      } else if ((r.keepAlive && followUp === 'half-close') || followUp === 'half-close-always') {
        socket.end();
      }
    });
    socket.on('end', () => finish('end'));
    socket.on('error', (err) => finish(`error:${err.code}`));
    socket.on('close', () => finish('close'));
  });
}

/**
 * Runs `fn(item)` for every item with at most `limit` in flight; stops
 * starting new ones once `stop()` returns true.
 */
async function pool(items, limit, fn, stop = () => false) {
  const results = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length && !stop()) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

function listen(server) {
  return withTimeout(new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve(server.address().port);
    });
  }), 10000, 'listen');
}

/** Closes the server and every connection it still has. */
function closeServer(server) {
  if (!server.listening) return Promise.resolve();
  const closed = new Promise((resolve) => server.close(() => resolve()));
  if (typeof server.closeAllConnections === 'function') server.closeAllConnections();
  return withTimeout(closed, 10000, 'server.close');
}

/** The sentinel's handler, identical on both sides: Node's end() without data. */
function handleSentinel(req, res, nodeEnd) {
  if (req.url !== SENTINEL_PATH) return false;
  nodeEnd.call(res);
  return true;
}


module.exports = {
  http,
  BAIL,
  EXCHANGE_TIMEOUT_MS,
  SENTINEL_PATH,
  maskDate,
  maskDateBytes,
  errorInfo,
  snapshot,
  withTimeout,
  scanResponses,
  requestMethods,
  exchange,
  pool,
  listen,
  closeServer,
  handleSentinel,
  statsDelta,
};
