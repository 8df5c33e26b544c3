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
// Requests are numbered from the parser, whose onIncoming is wrapped when
// the socket is first seen pipelining (the first response ended while it
// waits behind the current one, itself Node's: queuedWriter()). A queued
// response joins the batch when the response of the request just before it
// did, or went out through the addon as the socket's current one
// (wroteCurrent()); or, while the writer is new and its batch empty, when
// its request is the first numbered: a batch is written at the turn of its
// first response, so whatever came before it (Node's path included) is out
// by then, in request order. A response after which Node writes nothing
// (`_last`: Connection: close, an HTTP/1.0 client) ends the batch (Node
// gives no later response a turn either; after the response that reaches
// maxRequestsPerSocket, with Connection: close but not `_last`, Node
// writes its 503s, and so does the batch). Only a plain socket of its own
// has a writer: on TLS (the bytes must be encrypted) and where something
// wraps socket.write(), the queued responses are Node's.

const { binding, layout, args, results } = require('./binding');
const { nodeEnd } = require('./node-internals');
const { socketRefusal, socketFd } = require('./socket-fd');
const { countBytes, failNextWrite, bytesOf, failedWriteCounted } = require('./complete');
const { countFast } = require('./stats');

const {
  ARG_FD, ARG_WRITER, ARG_BODY_TAG, RESULT_REMAINING, RESULT_WRITTEN, BODY_KIND_MASK, BODY_BYTES,
} = layout;

const kWriter = Symbol('fastResponse.writer');
const kNumber = Symbol('fastResponse.requestNumber');
// A queued response's bytes in its socket's batch, and its Buffer body's tag.
const kBytes = Symbol('fastResponse.batchBytes');
const kTag = Symbol('fastResponse.bodyTag');
// Whether Node's own write of the queued response counts its bytes in
// socket.bytesWritten when it fails (lib/complete.js failedWriteCounted()).
const kFailedCounted = Symbol('fastResponse.failedWriteCounted');

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
    // Buffer bodies the batch refers to (not copied), by tag: kept alive
    // here until their response is out.
    this.bodies = new Map();
    this.nextTag = 1;
    // Bytes of the batch the writer's writev(2) wrote ahead of their
    // response's turn: socket.bytesWritten counts them when it comes.
    this.ahead = 0;
    // The responses in the batch whose turn has not come, in request order.
    this.waiting = [];
    socket.once('close', () => {
      binding.closeWriter(this.id);
      this.bodies.clear();
      this.waiting.length = 0;
    });
  }

  /**
   * The turn of the batch's first response `res` (`bytes` long, Buffer body
   * `tag`): its bytes go out now, as Node would write them now. One
   * writev(2) takes the whole batch when nothing is ahead of it on the
   * socket (socketFd(): a plain, writable socket whose write() nothing
   * wraps, its default encoding UTF-8, nothing buffered or corked); what
   * the kernel does not take of this response goes to socket.write()
   * (where libuv queues it and Node's backpressure and error handling take
   * it), the rest of the batch waits for its own turn.
   * `callback` (the response's 'finish') runs once its bytes are written.
   * `failedCounted`: a failed writev(2) counts the response's bytes in
   * socket.bytesWritten, as Node's own write of it would.
   */
  turn(res, bytes, tag, callback, failedCounted) {
    const socket = this.socket;
    const handle = socket._handle;
    const waiting = this.waiting;
    if (waiting[0] === res) waiting.shift();
    let need = bytes;
    let counted = Math.min(this.ahead, need);
    this.ahead -= counted;
    need -= counted;
    let written = 0;
    // Nothing is written ahead while this response or one waiting after it
    // was destroyed before its turn: res.destroy() of a queued response
    // destroys the socket when the response is given it (Node 18 to 22),
    // or, with an error, after the response is written (Node 24 and
    // later), and Node writes nothing from there on. This response's bytes
    // then go to socket.write() and the rest waits for its turn.
    const writeAhead = need > 0 && !res.destroyed && !destroyedWaiting(waiting);
    const fd = writeAhead ? socketFd(socket, 0) : null;
    if (typeof fd === 'number') {
      args[ARG_FD] = fd;
      args[ARG_WRITER] = this.id;
      binding.flushWriter();
      written = results[RESULT_WRITTEN];
      if (written !== 0) socket._unrefTimer();
      if (written > 0) {
        const mine = Math.min(written, need);
        counted += mine;
        need -= mine;
        this.ahead += written - mine;
      }
    }
    // socket.bytesWritten counts the response's bytes now, as Node's own
    // write of it would.
    if (counted > 0) countBytes(handle, counted);
    if (need === 0) {
      if (tag !== 0) this.bodies.delete(tag);
      process.nextTick(callback);
      return;
    }
    // Its rest to socket.write(); a failed writev(2) fails that write with
    // the same error, as libuv would report it.
    if (written < 0) {
      failNextWrite(handle, written);
      if (failedCounted) countBytes(handle, need);
    }
    args[ARG_FD] = -1;  // writes nothing: the writer's bytes are pending()'s
    args[ARG_WRITER] = this.id;
    binding.flushWriter();
    const parts = binding.pending(need);
    const bodyOf = (t) => this.bodies.get(t);
    socket.cork();
    for (let i = 0; i < parts.length; i++) {
      const part = bytesOf(parts[i], bodyOf);
      if (i === parts.length - 1) socket.write(part, callback);
      else socket.write(part);
    }
    socket.uncork();
    if (tag !== 0) this.bodies.delete(tag);
  }
}

/** Whether a response of `waiting` (the batch's, after the current one) was destroyed. */
function destroyedWaiting(waiting) {
  for (let i = 0; i < waiting.length; i++) {
    if (waiting[i].destroyed) return true;
  }
  return false;
}

/**
 * After the socket's current response went out through the addon: it is
 * the last in request order, and the next request's response may join the
 * batch (on a socket seen pipelining: queuedWriter()).
 */
function wroteCurrent(res, socket) {
  const writer = socket[kWriter];
  if (writer === undefined || writer === false) return;
  const n = res.req[kNumber];
  writer.last = n === undefined ? -1 : n;
  writer.closed = res._last === true;
}

/**
 * The writer of the socket `res` waits on, when `res` may join its batch:
 * its request is the one after the last whose response joined the batch
 * or went out through the addon, and nothing closes the connection before
 * it. Else null. The first response seen waiting on a socket (pipelining)
 * gives the socket its writer (startWriter()) and is Node's itself: its
 * request was parsed before the numbering began.
 */
function queuedWriter(res) {
  const req = res.req;
  const socket = req === null || req === undefined ? null : req.socket;
  if (socket === null || socket === undefined) return null;
  const writer = socket[kWriter];
  if (writer === undefined) {
    socket[kWriter] = startWriter(socket);
    return null;
  }
  if (writer === false || writer.closed || req[kNumber] !== writer.last + 1) return null;
  // What would keep the addon off the socket at the response's turn keeps
  // the response out of the batch now (the turn writes the batch, else
  // hands it to socket.write()).
  if (socketRefusal(socket) !== null) return null;
  return writer;
}

/**
 * A writer for a socket seen pipelining, numbering the requests its parser
 * hands over from now on (1, 2, ...): the first of them may start the
 * batch (`last` 0). False where the socket has no parser to number them or
 * is TLS (the addon writes the socket's descriptor, which a TLS socket
 * reports as its TCP connection's): nothing joins a batch there.
 */
function startWriter(socket) {
  if (socket.encrypted) return false;
  const parser = socket.parser;
  if (parser === null || parser === undefined || typeof parser.onIncoming !== 'function') return false;
  const created = new SocketWriter(socket);
  const onIncoming = parser.onIncoming;
  parser.onIncoming = function numberRequest(incoming, keepAlive) {
    incoming[kNumber] = ++created.parsed;
    return onIncoming(incoming, keepAlive);
  };
  return created;
}

/**
 * args[ARG_WRITER] and args[ARG_BODY_TAG] for a write of `res`: the
 * environment's writer, written now (-1, 0); or its socket's batch, with a
 * tag for a Buffer body the batch refers to.
 */
function setWriterArgs(fd, res, body, kind) {
  if (fd !== RENDER_ONLY) {
    args[ARG_WRITER] = -1;
    args[ARG_BODY_TAG] = 0;
    return;
  }
  const writer = res.req.socket[kWriter];
  args[ARG_WRITER] = writer.id;
  let tag = 0;
  if ((kind & BODY_KIND_MASK) === BODY_BYTES) {
    tag = writer.nextTag++;
    writer.bodies.set(tag, body);
  }
  args[ARG_BODY_TAG] = tag;
  res[kTag] = tag;
}

/**
 * A queued response the addon rendered into its socket's batch: Node's
 * end() queues the head and 'finish' as for any response ended before its
 * turn (see the top of this file).
 */
function completeQueued(res, chunk, kind, callback, headJoined) {
  const writer = res.req.socket[kWriter];
  const bytes = results[RESULT_REMAINING];
  res[kBytes] = bytes;
  res[kFailedCounted] = failedWriteCounted(res, chunk, headJoined);
  writer.last = res.req[kNumber];
  writer.waiting.push(res);
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
 * when the response becomes the socket's current one: its bytes go out
 * (SocketWriter.turn()) instead of what Node's end() queued (the head,
 * already in the batch), and the callback queued with it ('finish') runs
 * once they are written.
 */
function flushQueued(socket) {
  const writer = socket[kWriter];
  const outputData = this.outputData;
  this.outputData = [];
  this._onPendingData(-this.outputSize);
  this.outputSize = 0;
  const callbacks = [];
  for (let i = 0; i < outputData.length; i++) {
    if (typeof outputData[i].callback === 'function') callbacks.push(outputData[i].callback);
  }
  writer.turn(this, this[kBytes], this[kTag], callbacks.length === 1 ? callbacks[0] : () => {
    for (let i = 0; i < callbacks.length; i++) callbacks[i]();
  }, this[kFailedCounted]);
  return true;
}

module.exports = { RENDER_ONLY, wroteCurrent, queuedWriter, setWriterArgs, completeQueued };
