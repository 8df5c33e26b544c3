'use strict';

// What fast-response reads of Node's own http implementation, found once.
// The symbols are Node's private keys on OutgoingMessage; they are looked up
// by description, so a Node version without one of them makes the fast path
// step aside for the behaviour it guards instead of guessing.

const http = require('node:http');

const { ServerResponse, STATUS_CODES } = http;
const OutgoingMessage = Object.getPrototypeOf(ServerResponse.prototype).constructor;

/** `end` as Node (or whoever patched it before us) defines it. */
const nodeEnd = ServerResponse.prototype.end;
const nodeWriteHead = ServerResponse.prototype.writeHead;
const nodeImplicitHeader = ServerResponse.prototype._implicitHeader;

function findSymbol(object, description) {
  for (const sym of Object.getOwnPropertySymbols(object)) {
    if (sym.description === description) return sym;
  }
  return undefined;
}

// A response that never sees a socket, to learn the symbols the constructor
// sets and to make Node throw its own errors for bad template arguments.
function detachedResponse() {
  return new ServerResponse({
    method: 'GET',
    httpVersionMajor: 1,
    httpVersionMinor: 1,
    headers: {},
  });
}

const probe = detachedResponse();
const kOutHeaders = findSymbol(probe, 'kOutHeaders');
const kRejectNonStandardBodyWrites = findSymbol(probe, 'kRejectNonStandardBodyWrites');

// Set by the server on each response (not by the constructor): looked up on
// the first real response.
let kUniqueHeaders;
function uniqueHeadersOf(res) {
  if (kUniqueHeaders === undefined) {
    kUniqueHeaders = findSymbol(res, 'kUniqueHeaders') || null;
  }
  return kUniqueHeaders === null ? null : res[kUniqueHeaders];
}

/**
 * Throws what `res.writeHead(statusCode, headers)` throws for these
 * arguments, by letting Node itself run it on a detached response.
 * Returns normally when Node accepts them.
 */
function throwLikeWriteHead(statusCode, headers) {
  detachedResponse().writeHead(statusCode, headers);
}

module.exports = {
  http,
  ServerResponse,
  OutgoingMessage,
  STATUS_CODES,
  nodeEnd,
  nodeWriteHead,
  nodeImplicitHeader,
  kOutHeaders,
  kRejectNonStandardBodyWrites,
  uniqueHeadersOf,
  throwLikeWriteHead,
};
