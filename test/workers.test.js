'use strict';

// The addon in several worker_threads at once (per-environment state), and
// what observers of the response see: the 'http.server.response.finish'
// diagnostics channel and AsyncLocalStorage context in 'finish' listeners
// and end() callbacks, the same with Node's end and the fast path.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const diagnosticsChannel = require('node:diagnostics_channel');
const { AsyncLocalStorage } = require('node:async_hooks');
const { Worker } = require('node:worker_threads');

const { differential, get, withTimeout } = require('./helpers/differential');

const WORKERS = 4;
const REQUESTS = 200;

describe('worker_threads', () => {
  test(`the addon loaded in ${WORKERS} workers at once: each serves ${REQUESTS} requests through fastEnd/send/template, byte-exact`, async () => {
    const workers = [];
    try {
      const ready = [];
      const done = [];
      for (let id = 0; id < WORKERS; id++) {
        const worker = new Worker(path.join(__dirname, 'helpers', 'worker-app.js'), {
          workerData: { id, count: REQUESTS },
        });
        workers.push(worker);
        const messages = [];
        let wake = null;
        worker.on('message', (m) => {
          messages.push(m);
          if (wake) wake();
        });
        const next = (type) => new Promise((resolve, reject) => {
          const look = () => {
            const i = messages.findIndex((m) => m.type === type || m.type === 'error');
            if (i === -1) return false;
            const [m] = messages.splice(i, 1);
            if (m.type === 'error') reject(new Error(`worker ${id}: ${m.message}`));
            else resolve(m);
            return true;
          };
          if (!look()) wake = () => { if (look()) wake = null; };
          worker.once('error', reject);
        });
        ready.push(next('listening'));
        done.push(() => next('done'));
      }
      await withTimeout(Promise.all(ready), 20000, 'workers to listen');
      const results = done.map((wait) => wait());
      for (const worker of workers) worker.postMessage('go');
      const reports = await withTimeout(Promise.all(results), 30000, 'workers to finish');
      for (const [id, report] of reports.entries()) {
        assert.equal(report.native, true, `worker ${id} loaded the addon`);
        assert.equal(report.responses, REQUESTS, `worker ${id}`);
        assert.equal(report.mismatch, null, `worker ${id}: ${JSON.stringify(report.mismatch)}`);
        assert.equal(report.stats.fast + report.stats.partial, REQUESTS,
                     `worker ${id} wrote every response on the fast path: ${JSON.stringify(report.stats)}`);
        assert.equal(report.stats.fallback, 0, `worker ${id}: ${JSON.stringify(report.stats)}`);
      }
    } finally {
      await Promise.all(workers.map((w) => w.terminate()));
    }
  });
});

describe('diagnostics_channel and AsyncLocalStorage', () => {
  const channel = diagnosticsChannel.channel('http.server.response.finish');
  const als = new AsyncLocalStorage();
  const kRecord = Symbol('record');

  // Publishes land in the recording of the response they are about.
  function onFinishPublished(message) {
    const record = message.response[kRecord];
    if (record === undefined) return;
    record('published http.server.response.finish', {
      store: als.getStore(),
      sameRequest: message.request === message.response.req,
      hasSocket: message.socket !== undefined && message.socket !== null,
      hasServer: message.server !== undefined && message.server !== null,
    });
  }

  function observed(body, extra) {
    return (req, res, ctx) => {
      res[kRecord] = ctx.record;
      als.run(`store of ${req.url}`, () => {
        res.on('finish', () => ctx.record('store in finish listener', als.getStore()));
        res.on('close', () => ctx.record('store in close listener', als.getStore()));
        const go = () => {
          if (extra) extra(res);
          ctx.api.end(res, body(req), (err) => ctx.record('store in end callback', [als.getStore(), err]));
        };
        if (req.url === '/now') go();
        else setImmediate(go);
      });
    };
  }

  async function withSubscriber(fn) {
    channel.subscribe(onFinishPublished);
    try {
      return await fn();
    } finally {
      channel.unsubscribe(onFinishPublished);
    }
  }

  function publishedOncePerResponse(run, responses) {
    const published = run.rec.custom.filter((c) => c.value && c.at.endsWith(':published http.server.response.finish'));
    assert.equal(published.length, responses, JSON.stringify(run.rec.custom));
    for (let i = 0; i < responses; i++) {
      const mine = published.filter((c) => c.at === `res${i}:published http.server.response.finish`);
      assert.equal(mine.length, 1, `response ${i} published once`);
      assert.deepEqual(mine[0].value, { store: mine[0].value.store, sameRequest: true, hasSocket: true, hasServer: true });
    }
  }

  test('one publish per response, and the same AsyncLocalStorage store in finish listeners, callbacks and subscribers', () =>
    withSubscriber(async () => {
      const { node, fast } = await differential({
        request: get('/now'),
        handler: observed((req) => `hello ${req.url}`),
      });
      publishedOncePerResponse(node, 1);
      publishedOncePerResponse(fast, 1);
      const finish = fast.rec.custom.find((c) => c.at === 'res0:store in finish listener');
      assert.equal(finish.value, 'store of /now');
    }));

  test('pipelined responses: one publish each, each in its own request\'s context', () =>
    withSubscriber(async () => {
      const { node, fast } = await differential({
        request: get('/a') + get('/b', '', 'HEAD') + get('/c'),
        handler: observed((req) => `hello ${req.url}`),
      });
      publishedOncePerResponse(node, 3);
      publishedOncePerResponse(fast, 3);
      for (const [i, url] of ['/a', '/b', '/c'].entries()) {
        const finish = fast.rec.custom.find((c) => c.at === `res${i}:store in finish listener`);
        assert.equal(finish.value, `store of ${url}`);
      }
    }));

  test('a partial write (8 MiB, client reads late): one publish, same context after the rest is written', () =>
    withSubscriber(async () => {
      const big = Buffer.alloc(8 * 1024 * 1024, 'q');
      const { node, fast } = await differential({
        request: get('/big'),
        pauseClientUntil: 'ended',
        handler: (req, res, ctx) => {
          res[kRecord] = ctx.record;
          als.run('store of /big', () => {
            res.on('finish', () => ctx.record('store in finish listener', als.getStore()));
            ctx.api.end(res, big, () => ctx.record('store in end callback', als.getStore()));
            ctx.signal('ended').resolve();
          });
        },
        partial: 1,
      });
      publishedOncePerResponse(node, 1);
      publishedOncePerResponse(fast, 1);
    }));

  test('send() and template(): one publish per response, same context', () =>
    withSubscriber(async () => {
      for (const entry of ['send', 'template']) {
        const { node, fast } = await differential({
          request: get('/x') + get('/y'),
          handler: (req, res, ctx) => {
            res[kRecord] = ctx.record;
            als.run(`store of ${req.url}`, () => {
              res.on('finish', () => ctx.record('store in finish listener', als.getStore()));
              setImmediate(() => {
                if (entry === 'send') ctx.api.send(res, 200, { 'X-A': 'b' }, req.url);
                else ctx.api.template(200, { 'X-A': 'b' }).send(res, req.url);
              });
            });
          },
        });
        publishedOncePerResponse(node, 2);
        publishedOncePerResponse(fast, 2);
      }
    }));
});
