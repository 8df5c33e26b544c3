'use strict';

// Express (a devDependency) with a JSON route and a text route, as
// github.com/fastify/benchmarks's express.js: res.json({ hello: … }) with
// etag and x-powered-by disabled; route=text is res.send() of a string.
// method=plain: the app as it is (the baseline); method=patched: the same
// app under install({ patchEnd: true }), what `node -r
// fast-response/register` does. Express renders the head in res.end(),
// through Node's _implicitHeader(): the package renders it natively.

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
  cases.serveApp(bench, 'express', { route, len, method, c, duration });
}
