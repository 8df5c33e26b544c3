'use strict';

// Runs inside a worker_thread (test/workers.test.js): loads the addon, serves
// `count` requests through fastEnd / send / template on its own server and
// the same requests through Node's own API on a reference server, and
// reports every response of both plus this thread's stats().

const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const net = require('node:net');

const fastResponse = require('../..');
const { parseResponses, maskDate } = require('./differential');

const { id, count } = workerData;

function bodyFor(i) {
  // Sizes from a few bytes to ~9 KB, multi-byte characters, distinct per
  // worker and request.
  const unit = `w${id}/r${i} h\u00e9llo \u2713 \u{1F600};`;
  return unit.repeat(1 + ((i * 37) % 300));
}

const headers = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Worker': String(id) };
const fastTemplate = fastResponse.template(200, headers);

function handle(fast) {
  return (req, res) => {
    const i = Number(req.url.slice(1));
    const body = bodyFor(i);
    switch (i % 3) {
      case 0:
        res.setHeader('Content-Type', headers['Content-Type']);
        res.setHeader('X-Worker', headers['X-Worker']);
        if (fast) res.fastEnd(body);
        else res.end(body);
        break;
      case 1:
        if (fast) fastResponse.send(res, 200, headers, body);
        else res.writeHead(200, { ...headers, 'Content-Length': Buffer.byteLength(body) }).end(body);
        break;
      default:
        if (fast) fastTemplate.send(res, Buffer.from(body));
        else res.writeHead(200, { ...headers, 'Content-Length': Buffer.byteLength(body) }).end(Buffer.from(body));
    }
  };
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

// Sends the requests one after the other on one keep-alive connection and
// returns each response's bytes (Date masked).
function fetchAll(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
    const out = [];
    let chunks = [];
    let received = 0;
    let needed = 0;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`worker ${id}: timed out after ${out.length} responses`));
    }, 20000);
    const next = () => {
      if (out.length === count) {
        clearTimeout(timer);
        socket.end();
        resolve(out);
        return;
      }
      socket.write(`GET /${out.length} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    };
    socket.on('connect', next);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received < needed) return;
      const bytes = Buffer.concat(chunks);
      const parsed = parseResponses(bytes, ['GET']);
      needed = parsed.needed;
      if (parsed.responses.length === 0) return;
      out.push(maskDate(bytes.toString('latin1')));
      chunks = [];
      received = 0;
      needed = 0;
      next();
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

async function main() {
  const uninstall = fastResponse.install();
  const fastServer = http.createServer(handle(true));
  const nodeServer = http.createServer(handle(false));
  const [fastPort, nodePort] = await Promise.all([listen(fastServer), listen(nodeServer)]);
  parentPort.postMessage({ type: 'listening' });
  // All workers start their clients together.
  await new Promise((resolve) => parentPort.once('message', resolve));
  fastResponse.resetStats();
  const [fast, node] = await Promise.all([fetchAll(fastPort), fetchAll(nodePort)]);
  const stats = fastResponse.stats();
  fastServer.close();
  nodeServer.close();
  uninstall();
  let mismatch = null;
  for (let i = 0; i < count && mismatch === null; i++) {
    const expectedBody = Buffer.from(bodyFor(i)).toString('latin1');
    if (fast[i] !== node[i] || !fast[i].endsWith(`\r\n\r\n${expectedBody}`)) {
      mismatch = { i, fast: fast[i].slice(0, 400), node: node[i].slice(0, 400) };
    }
  }
  parentPort.postMessage({
    type: 'done',
    native: fastResponse.native,
    responses: fast.length,
    mismatch,
    stats,
  });
}

main().catch((err) => parentPort.postMessage({ type: 'error', message: err.stack }));
