'use strict';

// Koa (a devDependency) with a JSON route and a text route, as
// github.com/fastify/benchmarks's koa.js: one async middleware setting
// ctx.body = { hello: … }; route=text sets it to a string. method=plain: the
// app as it is (the baseline); method=patched: the same app under
// install({ patchEnd: true }), what `node -r fast-response/register` does.
// Koa sets the status and fields with setHeader() and ends with
// res.end(body): the package renders the head natively.

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
  cases.serveApp(bench, 'koa', { route, len, method, c, duration });
}
