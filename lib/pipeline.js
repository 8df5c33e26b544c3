'use strict';

// Pipelined responses: the FastResponse writer of one socket, for the
// responses that wait behind the socket's current one.
//
// When several requests arrive in one read, Node's server runs every
// handler at once but gives the socket to one response at a time: the
// others are queued, and each is written (one writev(2) of its own, on a
// tick of its own) when its predecessor has finished. Here a queued response
// whose predecessors all went out through the addon, in request order, is
// rendered when its handler ends it and its bytes join the socket's batch.
// The batch goes to the kernel with one writev(2) at the point Node would
// write the first response in it: when that response becomes the socket's
// current one. The responses after it are then already out when their turn
// comes.
//
// Node's own end() does each queued response's bookkeeping, as for any
// response ended before its turn: it queues the head with the 'finish'
// callback in `outputData`; when the response becomes current, Node's
// _flush() calls its _flushOutput(), which (flushQueued() below) writes the
// batch instead and calls that callback once the bytes are in the kernel.
// So 'prefinish', 'finish', 'close', keep-alive and the next response are
// Node's, in request order.
//
// Requests are numbered from the parser (its onIncoming is wrapped once the
// socket has been seen pipelining): a queued response joins the batch only
// when the response of the request just before it did. A response that
// closes the connection (Connection: close, maxRequestsPerSocket) ends the
// batch: Node writes nothing after it, and neither does this.

const { binding, layout, args, results } = require('./binding');
const { nodeEnd } = require('./node-internals');
const { countBytes, failNextWrite } = require('./complete');
const { countFast } = require('./stats');

const { ARG_FD, ARG_WRITER, RESULT_REMAINING, RESULT_WRITTEN, BODY_KIND_MASK, BODY_BYTES } = layout;

const kWriter = Symbol('fastResponse.writer');
const kNumber = Symbol('fastResponse.requestNumber');

/** directFd()'s answer for a response that joins its socket's batch. */
const RENDER_ONLY = -1;

class SocketWriter {
  constructor(socket) {
    this.socket = socket;
    // The addon's writer of this socket: the batch (src/writer.h).
    this.id = binding.openWriter();
    // Number of the newest request parsed on the socket, and of the last
    // response whose bytes went out or wait in the batch (request order);
    // -1: the order is broken (a response took Node's path).
    this.parsed = 0;
    this.last = 0;
    // A response that closes the connection is in: nothing after it.
    this.closed = false;
    // Buffer bodies the batch refers to (not copied): kept alive here
    // until written.
    this.bodies = [];
    this.queued = false;
    // Bytes handed to socket.write() (a partial writev) are not written
    // yet: 'finish' callbacks wait for them in `waiting`.
    this.handedOver = false;
    this.waiting = [];
    socket.once('close', () => {
      binding.closeWriter(this.id);
      this.bodies = [];
    });
  }

  /**
   * Writes the batch now: one writev(2) when nothing is ahead of it on the
   * socket; the rest (or, behind bytes still queued there, everything) to
   * socket.write(), in order.
   */
  flush() {
    if (!this.queued) return;
    this.queued = false;
    const socket = this.socket;
    const handle = socket._handle;
    const direct = !this.handedOver && socket.writableLength === 0 && socket.writableCorked === 0 &&
      handle !== null && handle !== undefined && handle.writeQueueSize === 0 &&
      typeof handle.fd === 'number' && handle.fd >= 0;
    // Not direct: fd -1 makes the addon's writev fail (EBADF) without a
    // byte written, and everything stays pending.
    args[ARG_FD] = direct ? handle.fd : -1;
    args[ARG_WRITER] = this.id;
    binding.flushWriter();
    const written = direct ? results[RESULT_WRITTEN] : 0;
    if (written !== 0) {
      countBytes(handle, written > 0 ? written : results[RESULT_REMAINING]);
      socket._unrefTimer();
    }
    const bodies = this.bodies;
    this.bodies = [];
    if (results[RESULT_REMAINING] === 0) return;
    // The rest goes to socket.write(), where libuv queues it behind what is
    // there and Node's backpressure and error handling take it.
    if (written < 0) failNextWrite(handle, written);
    this.handedOver = true;
    const parts = binding.pending();
    // The Buffer bodies still pending are the last ones of `bodies`.
    let body = bodies.length;
    for (let i = 0; i < parts.length; i++) if (typeof parts[i] === 'number') body--;
    socket.cork();
    for (let i = 0; i < parts.length; i++) {
      let part = parts[i];
      if (typeof part === 'number') {
        const whole = bodies[body++];
        part = part === whole.byteLength ? whole : whole.subarray(whole.byteLength - part);
      }
      if (i === parts.length - 1) socket.write(part, () => this.written());
      else socket.write(part);
    }
    socket.uncork();
  }

  /** `callback` (a response's 'finish') once every byte handed over is written. */
  afterWritten(callback) {
    if (this.handedOver) this.waiting.push(callback);
    else process.nextTick(callback);
  }

  written() {
    this.handedOver = false;
    const waiting = this.waiting;
    this.waiting = [];
    for (let i = 0; i < waiting.length; i++) waiting[i]();
  }
}

/**
 * After the socket's current response went out through the addon: it is
 * the last in request order. Starts numbering requests on a socket seen
 * pipelining (queuedWriter()), from a response after which nothing was
 * parsed yet.
 */
function wroteCurrent(res, socket) {
  const writer = socket[kWriter];
  if (writer === undefined) return;
  const req = res.req;
  if (writer === false) {
    const parser = socket.parser;
    if (parser === null || parser === undefined || parser.incoming !== req ||
        typeof parser.onIncoming !== 'function') {
      return;
    }
    const created = new SocketWriter(socket);
    socket[kWriter] = created;
    const onIncoming = parser.onIncoming;
    parser.onIncoming = function numberRequest(incoming, keepAlive) {
      incoming[kNumber] = ++created.parsed;
      return onIncoming(incoming, keepAlive);
    };
    req[kNumber] = 0;
    created.closed = res._last === true;
    return;
  }
  const n = req[kNumber];
  writer.last = n === undefined ? -1 : n;
  writer.closed = res._last === true;
}

/**
 * The writer of the socket `res` waits on, when `res` may join its batch:
 * the response just before it went out through the addon, and nothing
 * closes the connection before it. Else null (and a socket seen pipelining
 * is marked to number its requests).
 */
function queuedWriter(res) {
  const req = res.req;
  const socket = req === null || req === undefined ? null : req.socket;
  if (socket === null || socket === undefined) return null;
  const writer = socket[kWriter];
  if (writer === undefined) {
    socket[kWriter] = false;
    return null;
  }
  if (writer === false || writer.closed || req[kNumber] !== writer.last + 1) return null;
  if (socket.destroyed || !socket.writable) return null;
  return writer;
}

/** args[ARG_WRITER] for a write of `res`: its socket's writer, or -1 (write now). */
function writerArg(fd, res) {
  return fd === RENDER_ONLY ? res.req.socket[kWriter].id : -1;
}

/**
 * A queued response the addon rendered into its socket's batch: Node's
 * end() queues the head and 'finish' as for any response ended before its
 * turn (see the top of this file).
 */
function completeQueued(res, chunk, kind, callback) {
  const writer = res.req.socket[kWriter];
  const bytes = results[RESULT_REMAINING];
  writer.queued = true;
  if ((kind & BODY_KIND_MASK) === BODY_BYTES && res._hasBody) writer.bodies.push(chunk);
  writer.last = res.req[kNumber];
  if (res._last) writer.closed = true;
  countFast();
  res._flushOutput = flushQueued;
  const chunked = res.chunkedEncoding;
  // The last chunk went out with the body: end() must not queue it again.
  res.chunkedEncoding = false;
  let ret;
  try {
    ret = nodeEnd.call(res, null, null, callback);
  } finally {
    res.chunkedEncoding = chunked;
  }
  // Node counts a queued response's bytes as pending output (the server
  // pauses reading a socket with too much of it): the head it queued, and
  // the rest here.
  const more = bytes - res.outputSize;
  if (more > 0) {
    res.outputSize += more;
    res._onPendingData(more);
  }
  return ret;
}

/**
 * `_flushOutput()` of a response in the batch, called by Node's _flush()
 * when the response becomes the socket's current one: the batch goes out
 * instead of what Node's end() queued (the head, already in the batch), and
 * its callbacks ('finish') run once the response's bytes are in the kernel.
 */
function flushQueued(socket) {
  const writer = socket[kWriter];
  const outputData = this.outputData;
  this.outputData = [];
  this._onPendingData(-this.outputSize);
  this.outputSize = 0;
  writer.flush();
  for (let i = 0; i < outputData.length; i++) {
    const callback = outputData[i].callback;
    if (typeof callback === 'function') writer.afterWritten(callback);
  }
  return true;
}

module.exports = { RENDER_ONLY, wroteCurrent, queuedWriter, writerArg, completeQueued };
