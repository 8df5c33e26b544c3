'use strict';

// The framework apps of http/express.js, http/fastify.js and http/koa.js,
// built as github.com/fastify/benchmarks builds them (each case file says
// how), shared with instructions-stream.js --app. Each entry:
// `contentTypes`, the Content-Type each route sends, and `start(framework,
// value, route)`, the app listening on 127.0.0.1 with one route, `/`,
// sending `value` (_cases.js appRoute()); it resolves { port, close }.

// Fastify's JSON route serializes with a response schema
// (fast-json-stringify), as its benchmark does.
const fastifySchema = {
  schema: {
    response: {
      200: {
        type: 'object',
        properties: {
          hello: { type: 'string' },
        },
      },
    },
  },
};

const apps = {
  express: {
    contentTypes: { json: 'application/json; charset=utf-8', text: 'text/html; charset=utf-8' },
    start(express, value, route) {
      const app = express();
      app.disable('etag');
      app.disable('x-powered-by');
      app.get('/', route === 'json' ?
        (req, res) => {
          res.json(value);
        } :
        (req, res) => {
          res.send(value);
        });
      return new Promise((resolve, reject) => {
        const server = app.listen(0, '127.0.0.1', (err) => {
          if (err) reject(err);
          else resolve({ port: server.address().port, close: () => server.close() });
        });
      });
    },
  },
  fastify: {
    contentTypes: { json: 'application/json; charset=utf-8', text: 'text/plain; charset=utf-8' },
    async start(Fastify, value, route) {
      const fastify = Fastify({ logger: false });
      const handler = (req, reply) => {
        reply.send(value);
      };
      if (route === 'json') fastify.get('/', fastifySchema, handler);
      else fastify.get('/', handler);
      await fastify.listen({ port: 0, host: '127.0.0.1' });
      return { port: fastify.server.address().port, close: () => fastify.close() };
    },
  },
  koa: {
    contentTypes: { json: 'application/json; charset=utf-8', text: 'text/plain; charset=utf-8' },
    start(Koa, value) {
      const app = new Koa();
      app.use(async (ctx) => {
        ctx.body = value;
      });
      return new Promise((resolve, reject) => {
        const server = app.listen(0, '127.0.0.1');
        server.once('error', reject);
        server.once('listening', () => resolve({ port: server.address().port, close: () => server.close() }));
      });
    },
  },
};

module.exports = apps;
