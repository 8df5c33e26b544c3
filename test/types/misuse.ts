// Each line must be a type error (test/types.test.js counts them).
import fastResponse = require('fast-response');
import * as http from 'node:http';

declare const res: http.ServerResponse;
fastResponse.end(res, 42);
fastResponse.send(res, '200', {}, 'x');
fastResponse.install({ patchEnd: 'yes' });
fastResponse.template(200, { a: { nested: true } });
res.fastEnd({ body: 1 });
http.request({ port: 1 }).fastEnd({ body: 1 });
