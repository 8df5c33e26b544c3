'use strict';

// Fastify (a devDependency) with a JSON route and a text route, as
// github.com/fastify/benchmarks's fastify.js: reply.send({ hello: … }) with
// a response schema (fast-json-stringify); route=text is reply.send() of a
// string. method=plain: the app as it is (the baseline); method=patched:
// the same app under install({ patchEnd: true }), what `node -r
// fast-response/register` does. Fastify calls res.writeHead(status,
// headers) and then res.end(payload): Node renders the head, the package
// writes head and body.

const common = require('../common.js');
const cases = require('../_cases.js');

const bench = common.createBenchmark(main, {
  route: ['json', 'text'],
  len: [64],
  c: [50],
  duration: [5],
  method: ['plain', 'patched'],
});

function main({ route, len, method, c, duration }) {
  cases.serveApp(bench, 'fastify', { route, len, method, c, duration });
}
