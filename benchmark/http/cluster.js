'use strict';

// Node's benchmark/http/cluster.js with fast-response: the primary forks
// `workers` workers through node:cluster that share one port (the primary
// accepts the connections and hands them round-robin to the workers), each
// answering as end-string.js does: writeHead(200, { Content-Type,
// Content-Length }) and then res.end(body) (method=end, the baseline) or
// res.fastEnd(body) (method=fastEnd). The body: `len` bytes of 'a', a
// string. Primary and workers share the server CPU; server CPU time per
// response is theirs together.

const cluster = require('node:cluster');
const http = require('node:http');
const common = require('../common.js');
const cases = require('../_cases.js');

function responseOf(len) {
  return {
    chunk: cases.body('string', len),
    headers: { 'Content-Type': 'text/plain', 'Content-Length': len },
  };
}

function sumStats(list) {
  if (list.some((s) => s === null)) return null;
  const sum = { fast: 0, partial: 0, fallback: 0, reasons: {} };
  for (const s of list) {
    sum.fast += s.fast;
    sum.partial += s.partial;
    sum.fallback += s.fallback;
    for (const [reason, n] of Object.entries(s.reasons)) sum.reasons[reason] = (sum.reasons[reason] || 0) + n;
  }
  return sum;
}

function primary() {
  const bench = common.createBenchmark(main, {
    len: cases.LENS,
    c: [50],
    workers: [2],
    duration: [5],
    method: ['end', 'fastEnd'],
  });

  function main({ len, c, workers, duration, method }) {
    const { chunk, headers } = responseOf(len);
    const forks = [];
    const replies = new Map();
    let nextId = 0;
    let stopping = false;
    let listening = 0;

    const stop = () => {
      stopping = true;
      for (const w of forks) w.process.kill();
    };
    const ask = (w, cmd) => new Promise((resolve) => {
      const id = nextId++;
      replies.set(id, resolve);
      w.send({ cmd, id });
    });
    const askAll = (cmd) => Promise.all(forks.map((w) => ask(w, cmd)));

    cluster.on('message', (w, m) => {
      if (m.cmd === 'skip') {
        stop();
        bench.skip(m.reason);
      } else if (m.cmd === 'error') {
        stop();
        bench.fail(new Error(m.message));
      } else if (replies.has(m.id)) {
        replies.get(m.id)(m);
        replies.delete(m.id);
      }
    });
    cluster.on('exit', (w, code, signal) => {
      if (!stopping) bench.fail(new Error(`cluster worker ${w.process.pid} ended with ${signal || `code ${code}`}`));
    });
    cluster.on('listening', (w, address) => {
      if (++listening < workers) return;
      bench.http({
        port: address.port,
        connections: c,
        duration,
        expect: { status: 200, headers, body: chunk },
        cpuUsage: async () => {
          const usage = process.cpuUsage();
          for (const m of await askAll('usage')) {
            usage.user += m.cpu.user;
            usage.system += m.cpu.system;
          }
          return usage;
        },
        before: () => askAll('reset'),
        after: async () => {
          const all = await askAll('usage');
          return {
            ...cases.checkFastStats(method, sumStats(all.map((m) => m.stats))),
            workers: all.length,
          };
        },
      }, stop);
    });

    for (let i = 0; i < workers; i++) {
      forks.push(cluster.fork({ FAST_RESPONSE_BENCH_LEN: len, FAST_RESPONSE_BENCH_METHOD: method }));
    }
  }
}

function worker() {
  const method = process.env.FAST_RESPONSE_BENCH_METHOD;
  const { chunk, headers } = responseOf(Number(process.env.FAST_RESPONSE_BENCH_LEN));
  let prepared;
  try {
    prepared = cases.prepare(method);
  } catch (err) {
    process.send({ cmd: 'error', message: err.message });
    return;
  }
  if (prepared.skip !== null) {
    process.send({ cmd: 'skip', reason: prepared.skip });
    return;
  }
  const { fr } = prepared;
  const handler = method === 'fastEnd' ?
    (req, res) => {
      res.writeHead(200, headers);
      res.fastEnd(chunk);
    } :
    (req, res) => {
      res.writeHead(200, headers);
      res.end(chunk);
    };
  http.createServer(handler).listen(0, '127.0.0.1');
  process.on('message', (m) => {
    if (m.cmd === 'reset') {
      cases.resetStats(fr);
      process.send({ cmd: 'reset', id: m.id });
    } else if (m.cmd === 'usage') {
      process.send({ cmd: 'usage', id: m.id, cpu: process.cpuUsage(), stats: cases.readStats(fr) });
    }
  });
}

if (cluster.isPrimary) primary();
else worker();
