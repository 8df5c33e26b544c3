'use strict';

// Client-side HTTP/1.1 framing for the reliability tests (backpressure, peer
// faults, load, cluster): an incremental response parser that hands body
// bytes on as they arrive (a 64 MiB body is hashed, never kept), plus the
// small utilities those tests share. Only Content-Length and chunked bodies
// are framed; anything else is an error, because every response the tests'
// servers send is framed one of those two ways.

const { once } = require('node:events');
const http = require('node:http');
const net = require('node:net');
const v8 = require('node:v8');
const vm = require('node:vm');

const CRLF = Buffer.from('\r\n');
const CRLF2 = Buffer.from('\r\n\r\n');
const MAX_HEAD = 64 * 1024;

const HEAD = 0;
const BODY = 1;
const CHUNK_SIZE = 2;
const CHUNK_DATA = 3;
const CHUNK_CRLF = 4;
const TRAILERS = 5;

/**
 * Incremental parser of a stream of responses.
 *
 * handlers.onHead(response)        head parsed: { status, reason, version,
 *                                  fields (lower-case name -> [values]),
 *                                  rawHead (latin1), chunked, contentLength }
 * handlers.onData(response, buf)   body bytes (after de-chunking)
 * handlers.onEnd(response)         the response is complete
 *
 * `methods`: the request methods in order, so that HEAD responses have no
 * body (default GET). push() throws on malformed input.
 */
class ResponseParser {
  constructor(handlers, methods) {
    this.handlers = handlers;
    this.methods = methods || [];
    this.count = 0;
    this.state = HEAD;
    this.pending = null;
    this.remaining = 0;
    this.current = null;
    this.trailers = null;
  }

  push(chunk) {
    let buf = chunk;
    if (this.pending !== null) {
      buf = Buffer.concat([this.pending, chunk]);
      this.pending = null;
    }
    let pos = 0;
    while (pos < buf.length) {
      switch (this.state) {
        case HEAD: {
          const end = buf.indexOf(CRLF2, pos);
          if (end === -1) {
            if (buf.length - pos > MAX_HEAD) throw new Error('response head too long');
            this.pending = Buffer.from(buf.subarray(pos));
            return;
          }
          this.startResponse(buf.toString('latin1', pos, end + 4));
          pos = end + 4;
          break;
        }
        case BODY:
        case CHUNK_DATA: {
          const n = Math.min(this.remaining, buf.length - pos);
          this.handlers.onData(this.current, buf.subarray(pos, pos + n));
          pos += n;
          this.remaining -= n;
          if (this.remaining === 0) {
            if (this.state === BODY) this.endResponse();
            else this.state = CHUNK_CRLF;
          }
          break;
        }
        case CHUNK_CRLF: {
          if (buf.length - pos < 2) {
            this.pending = Buffer.from(buf.subarray(pos));
            return;
          }
          if (buf[pos] !== 13 || buf[pos + 1] !== 10) throw new Error('chunk not followed by CRLF');
          pos += 2;
          this.state = CHUNK_SIZE;
          break;
        }
        case CHUNK_SIZE:
        case TRAILERS: {
          const lineEnd = buf.indexOf(CRLF, pos);
          if (lineEnd === -1) {
            if (buf.length - pos > MAX_HEAD) throw new Error('chunk line too long');
            this.pending = Buffer.from(buf.subarray(pos));
            return;
          }
          const line = buf.toString('latin1', pos, lineEnd);
          pos = lineEnd + 2;
          if (this.state === TRAILERS) {
            if (line === '') this.endResponse();
            else this.current.trailers.push(line);
            break;
          }
          const sizeText = line.split(';')[0].trim();
          if (!/^[0-9a-fA-F]+$/.test(sizeText)) throw new Error(`bad chunk size ${JSON.stringify(line)}`);
          const size = parseInt(sizeText, 16);
          if (size === 0) {
            this.state = TRAILERS;
          } else {
            this.remaining = size;
            this.state = CHUNK_DATA;
          }
          break;
        }
        default:
          throw new Error('parser state');
      }
    }
  }

  startResponse(rawHead) {
    const lines = rawHead.split('\r\n');
    const m = /^HTTP\/(\d\.\d) (\d{3}) (.*)$/.exec(lines[0]);
    if (m === null) throw new Error(`not a status line: ${JSON.stringify(lines[0].slice(0, 80))}`);
    const fields = { __proto__: null };
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      if (line === '') continue;
      const colon = line.indexOf(':');
      if (colon <= 0) throw new Error(`bad header line ${JSON.stringify(line)}`);
      const name = line.slice(0, colon).toLowerCase();
      (fields[name] ??= []).push(line.slice(colon + 1).trim());
    }
    const status = Number(m[2]);
    const method = this.methods[this.count] || 'GET';
    const te = (fields['transfer-encoding'] || []).join(',').toLowerCase();
    const cl = fields['content-length'];
    const response = {
      index: this.count,
      version: m[1],
      status,
      reason: m[3],
      fields,
      rawHead,
      chunked: /\bchunked\b/.test(te),
      contentLength: cl === undefined ? -1 : Number(cl[0]),
      trailers: [],
      bodyBytes: 0,
    };
    this.current = response;
    this.handlers.onHead?.(response);
    if (status >= 100 && status <= 199) {
      // An informational response; its final response follows.
      this.current = null;
      return;
    }
    if (method === 'HEAD' || status === 204 || status === 304) {
      this.endResponse();
    } else if (response.chunked) {
      this.state = CHUNK_SIZE;
    } else if (cl !== undefined) {
      if (cl.length !== 1 || !/^\d+$/.test(cl[0])) throw new Error(`bad Content-Length ${cl}`);
      this.remaining = response.contentLength;
      if (this.remaining === 0) this.endResponse();
      else this.state = BODY;
    } else {
      throw new Error('response without Content-Length or chunked framing');
    }
  }

  endResponse() {
    const response = this.current;
    this.current = null;
    this.state = HEAD;
    this.count++;
    this.handlers.onEnd?.(response);
  }

  /** Whether the parser sits between responses. */
  get idle() {
    return this.state === HEAD && this.pending === null;
  }
}

// ---------------------------------------------------------------------------

/** Rejects after `ms` with a message naming what was awaited. */
function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Waits (bounded) until `predicate()` holds, checking on every turn of the loop. */
async function waitFor(predicate, ms, what) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** An http.Server on 127.0.0.1, listening. */
async function listen(handler, options) {
  const server = http.createServer(options || {}, handler);
  server.listen(0, '127.0.0.1');
  await withTimeout(once(server, 'listening'), 5000, 'listen');
  return server;
}

/** Closes a server and every connection it still has (bounded). */
async function closeServer(server) {
  if (!server.listening) return;
  const closed = once(server, 'close');
  server.close();
  server.closeAllConnections?.();
  await withTimeout(closed, 5000, 'server close');
}

/** A connected net.Socket to 127.0.0.1:port. */
async function connect(port) {
  const socket = net.connect(port, '127.0.0.1');
  await withTimeout(once(socket, 'connect'), 5000, 'connect');
  return socket;
}

/** The global gc(), enabled at run time (the test runner passes no flags). */
function getGc() {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc');
}

/**
 * Calls `fn()` once `res` is its socket's current response (a pipelined
 * response waits in the server's queue, without a socket, until the ones
 * before it have finished). Gives up silently when the connection is gone
 * first; `onGone()`, when given, is called then.
 */
function whenCurrent(req, res, fn, onGone) {
  const check = () => {
    if (res.destroyed || req.socket.destroyed) {
      onGone?.();
      return;
    }
    if (res.socket === null || res.socket._httpMessage !== res) {
      setImmediate(check);
      return;
    }
    fn();
  };
  check();
}

/**
 * Writes filler bytes straight to a socket's file descriptor until the
 * kernel takes no more (send and receive buffers full, the peer not
 * reading). Node's stream knows nothing of these bytes: its queue stays
 * empty, so the next fast write meets a full socket (EAGAIN). Returns the
 * number of bytes written.
 */
function fillKernelBuffers(fd, byte = 0x46) {
  const fs = require('node:fs');
  const block = Buffer.alloc(64 * 1024, byte);
  let total = 0;
  for (let size = block.length; size >= 1;) {
    try {
      total += fs.writeSync(fd, block, 0, size);
    } catch (err) {
      if (err.code !== 'EAGAIN' && err.code !== 'EWOULDBLOCK') throw err;
      size >>= 1;
    }
  }
  return total;
}

/** Open file descriptors of this process (Linux). */
function openFds() {
  return require('node:fs').readdirSync('/proc/self/fd').length;
}

/** What the kernel may buffer on one loopback connection at most (bytes). */
function kernelBufferBound() {
  const fs = require('node:fs');
  const max = (file) => Number(fs.readFileSync(file, 'latin1').trim().split(/\s+/).pop());
  return max('/proc/sys/net/ipv4/tcp_wmem') + max('/proc/sys/net/ipv4/tcp_rmem');
}

/** stats() after minus stats() before (fast-response's counters). */
function statsDelta(before, after) {
  const reasons = {};
  for (const [k, v] of Object.entries(after.reasons)) {
    const d = v - (before.reasons[k] || 0);
    if (d !== 0) reasons[k] = d;
  }
  const delta = {
    fast: after.fast - before.fast,
    partial: after.partial - before.partial,
    writes: after.writes - before.writes,
    fallback: after.fallback - before.fallback,
    reasons,
  };
  // stats().requests has no `writes` and no `heads`.
  if (after.writes === undefined) delete delta.writes;
  if (after.heads !== undefined) delta.heads = after.heads - before.heads;
  return delta;
}

module.exports = {
  statsDelta,
  ResponseParser,
  withTimeout,
  deferred,
  waitFor,
  listen,
  closeServer,
  connect,
  whenCurrent,
  fillKernelBuffers,
  getGc,
  openFds,
  kernelBufferBound,
};
