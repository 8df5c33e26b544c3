'use strict';

// The cluster module: two worker processes share one listening port (the
// primary accepts and hands each connection's handle to a worker, round
// robin), each worker loads the addon and answers through fastEnd(), send()
// and template(). Every response must be byte-exact and come from the worker
// it says it comes from, both workers must have answered, and both must have
// taken the fast path (their own stats()).
//
// This file is both the test (primary) and the worker program.

const cluster = require('node:cluster');

const WORKERS = 2;
const CONNECTIONS = 24;
const METHODS = ['fastEnd', 'send', 'template'];
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** The body worker `worker` sends for request `n` made `how`. */
function bodyFor(worker, n, how, large) {
  const size = large ? 512 * 1024 + n : 10 + ((n * 37) % 3000);
  return `worker=${worker} request=${n} via=${how};` +
    ALPHABET.repeat(Math.ceil(size / ALPHABET.length)).slice(0, size) + '€';
}

function runWorker() {
  const http = require('node:http');
  const fastResponse = require('..');
  fastResponse.install();
  const worker = cluster.worker.id;
  const tpl = fastResponse.template(200, { 'Content-Type': 'text/plain', 'X-Worker': String(worker) });
  const server = http.createServer((req, res) => {
    const m = /^\/(\w+)\/(\d+)(\/large)?$/.exec(req.url);
    if (m === null) {
      res.statusCode = 404;
      res.end();
      return;
    }
    const [, how, n, large] = m;
    const body = bodyFor(worker, Number(n), how, large !== undefined);
    if (how === 'fastEnd') {
      res.setHeader('Content-Type', 'text/plain');
      res.setHeader('X-Worker', String(worker));
      res.fastEnd(body);
    } else if (how === 'send') {
      fastResponse.send(res, 200, { 'Content-Type': 'text/plain', 'X-Worker': String(worker) }, Buffer.from(body));
    } else {
      tpl.send(res, body);
    }
  });
  server.listen(0, '127.0.0.1', () => {
    process.send({ type: 'listening', port: server.address().port });
  });
  process.on('message', (msg) => {
    if (msg && msg.type === 'stats') process.send({ type: 'stats', stats: fastResponse.stats() });
  });
}

if (cluster.isWorker) {
  runWorker();
} else {
  const assert = require('node:assert/strict');
  const { once } = require('node:events');
  const { test } = require('node:test');
  const {
    ResponseParser,
    withTimeout,
    deferred,
    connect,
  } = require('./helpers/raw-http');

  const WAIT_MS = 20000;

  function messageFrom(worker, type) {
    return withTimeout(new Promise((resolve, reject) => {
      const onMessage = (msg) => {
        if (msg && msg.type === type) {
          worker.off('message', onMessage);
          resolve(msg);
        }
      };
      worker.on('message', onMessage);
      worker.once('exit', (code) => reject(new Error(`worker ${worker.id} exited (${code})`)));
    }), WAIT_MS, `'${type}' from worker ${worker.id}`);
  }

  async function stopWorkers(workers) {
    await Promise.all(workers.map(async (worker) => {
      if (worker.isDead()) return;
      const exited = once(worker, 'exit');
      worker.kill();
      try {
        await withTimeout(exited, 5000, `worker ${worker.id} to exit`);
      } catch {
        worker.process.kill('SIGKILL');
        await withTimeout(exited, 5000, `worker ${worker.id} to exit after SIGKILL`);
      }
    }));
  }

  /**
   * One keep-alive connection: the requests one after the other, each
   * response checked against the body its worker must send.
   */
  async function connection(port, first, requests) {
    const socket = await connect(port);
    const answered = [];
    try {
      let current = null;
      const parser = new ResponseParser({
        onHead(r) {
          r.chunks = [];
        },
        onData(r, chunk) {
          r.chunks.push(Buffer.from(chunk));
        },
        onEnd(r) {
          r.body = Buffer.concat(r.chunks);
          delete r.chunks;
          current.resolve(r);
        },
      });
      socket.on('data', (chunk) => {
        try {
          parser.push(chunk);
        } catch (err) {
          current.reject(err);
        }
      });
      socket.on('error', (err) => current?.reject(err));
      socket.on('close', () => current?.reject(new Error('connection closed')));
      for (let i = 0; i < requests.length; i++) {
        const { how, large } = requests[i];
        const n = first + i;
        current = deferred();
        socket.write(`GET /${how}/${n}${large ? '/large' : ''} HTTP/1.1\r\nHost: cluster\r\n\r\n`);
        const r = await withTimeout(current.promise, WAIT_MS, `response ${n}`);
        assert.equal(r.status, 200);
        assert.equal(r.chunked, false);
        const worker = Number(r.fields['x-worker']?.[0]);
        const expected = Buffer.from(bodyFor(worker, n, how, large));
        assert.equal(r.contentLength, expected.length);
        assert.ok(r.body.equals(expected), `response ${n} (${how}) from worker ${worker} byte-exact`);
        answered.push(worker);
      }
      current = null;
    } finally {
      socket.destroy();
    }
    return answered;
  }

  test(`cluster: ${WORKERS} workers on one port answer byte-exact through fastEnd, send and template`, async () => {
    cluster.schedulingPolicy = cluster.SCHED_RR;
    cluster.setupPrimary({ exec: __filename, execArgv: [], args: [], silent: false });
    const workers = [];
    try {
      for (let i = 0; i < WORKERS; i++) workers.push(cluster.fork());
      const ports = (await Promise.all(workers.map((w) => messageFrom(w, 'listening')))).map((m) => m.port);
      assert.equal(new Set(ports).size, 1, 'both workers listen on one shared port');
      const port = ports[0];

      // Every connection: each method twice, one of them with a 512 KiB body.
      const plan = [];
      for (const how of METHODS) plan.push({ how, large: false }, { how, large: true });
      const answered = await Promise.all(Array.from({ length: CONNECTIONS }, (_, c) =>
        connection(port, c * plan.length, plan)));

      const byWorker = new Map();
      for (const list of answered) {
        // A connection is served by one worker from start to end.
        assert.equal(new Set(list).size, 1);
        byWorker.set(list[0], (byWorker.get(list[0]) || 0) + list.length);
      }
      assert.deepEqual([...byWorker.keys()].sort(), workers.map((w) => w.id).sort(),
                       'both workers answered');

      // Each worker wrote its responses itself, through the addon.
      for (const worker of workers) {
        const reply = messageFrom(worker, 'stats');
        worker.send({ type: 'stats' });
        const { stats } = await reply;
        assert.equal(stats.fast + stats.partial, byWorker.get(worker.id),
                     `worker ${worker.id}: every response on the fast path (${JSON.stringify(stats)})`);
        assert.equal(stats.fallback, 0);
      }
    } finally {
      await stopWorkers(workers);
    }
  });
}
