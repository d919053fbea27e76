import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { routeTable } from '../support/route-table';
import { startTestApp, type TestApp } from '../support/test-app';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { security: unknown[]; responses: Record<string, unknown> }>>;
  components: { schemas: Record<string, { required?: string[] }> };
};

describe('OpenAPI document at /openapi.json', () => {
  let t: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    t = await startTestApp();
    doc = (await t.auth().get('/openapi.json').expect(200)).body as Doc;
  });
  afterAll(async () => {
    await t.close();
  });

  it('describes exactly the routes the service mounts', () => {
    const mounted = routeTable(t.app)
      .map((r) => r.split(' -> ')[0] as string)
      .map((r) => r.replace(/:(\w+)/g, '{$1}'));
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(mounted.sort());
  });

  it('states the contract shapes: error body, token response, session routes', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.schemas.Error?.required).toEqual(['error', 'error_description']);
    const token = doc.paths['/management-auth/token']?.post?.responses['200'] as {
      content: Record<string, { schema: { required: string[] } }>;
    };
    expect(token.content['application/json']?.schema.required.sort()).toEqual([
      'access_token',
      'expires_in',
      'refresh_token',
      'scope',
      'session_id',
      'token_type',
    ]);
    expect(Object.keys(doc.paths['/management-auth/revoke-session']?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '400', '401', '503']),
    );
    expect(Object.keys(doc.paths['/management-auth/email/start']?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(['202', '403', '429', '503']),
    );
    const guest = doc.paths['/t/{tenantId}/guest']?.post?.responses['201'] as {
      content: Record<string, { schema: { required: string[]; properties: Record<string, unknown> } }>;
    };
    expect(guest.content['application/json']?.schema.required.sort()).toEqual([
      'access_token',
      'expires_in',
      'scope',
      'session_id',
      'token_type',
      'upgrade_proof',
      'user_id',
    ]);
    expect(Object.keys(guest.content['application/json']?.schema.properties ?? {})).toEqual(
      expect.arrayContaining(['refresh_token', 'id_token']),
    );
    expect(Object.keys(doc.paths['/t/{tenantId}/guest/upgrade']?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '400', '409']),
    );
    // Contract 13: a player's own account, read and deleted with its bearer token.
    const me = doc.paths['/t/{tenantId}/me'];
    expect(Object.keys(me?.get?.responses ?? {})).toEqual(expect.arrayContaining(['200', '401', '503']));
    expect(Object.keys(me?.delete?.responses ?? {})).toEqual(expect.arrayContaining(['200', '401', '403', '503']));
    const account = me?.get?.responses['200'] as {
      content: Record<string, { schema: { properties: { user: { required: string[] } } } }>;
    };
    expect(account.content['application/json']?.schema.properties.user.required.sort()).toEqual([
      'created_at',
      'guest',
      'id',
      'identities',
    ]);
    expect(me?.get?.security).toEqual([{ guestBearer: [] }]);
    expect(me?.delete?.security).toEqual([{ guestBearer: [] }]);
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops))
        expect({ route: `${method} ${path}`, security: Array.isArray(op.security) }).toEqual({
          route: `${method} ${path}`,
          security: true,
        });
    }
  });

  it('gives every operation an operationId, a declared tag and an example, for client generators', () => {
    const declared = new Set((doc as unknown as { tags: Array<{ name: string }> }).tags.map((t) => t.name));
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, raw] of Object.entries(ops)) {
        const op = raw as unknown as { operationId?: string; tags?: string[] };
        const route = `${method} ${path}`;
        expect({ route, operationId: op.operationId }).toEqual({
          route,
          operationId: expect.stringMatching(/^[a-z][A-Za-z]+$/),
        });
        ids.add(op.operationId as string);
        expect({ route, tags: op.tags?.every((t) => declared.has(t)) && op.tags.length > 0 }).toEqual({
          route,
          tags: true,
        });
        expect({ route, example: JSON.stringify(raw).includes('"example"') }).toEqual({ route, example: true });
      }
    }
    expect(ids.size).toBe(Object.values(doc.paths).flatMap((ops) => Object.keys(ops)).length);
  });

  it('passes a maintained OpenAPI linter (Redocly, recommended rules, redocly.yaml) with no error and no warning', () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      const root = join(__dirname, '..', '..');
      const out = execFileSync(
        join(root, 'node_modules/.bin/redocly'),
        ['lint', file, '--config', join(root, 'redocly.yaml'), '--format', 'stylish'],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        },
      );
      expect(out).not.toMatch(/warning|error/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('is the document every answer of the e2e suites is checked against', async () => {
    const served: unknown = (await t.auth().get('/openapi.json').expect(200)).body;
    expect(served).toEqual(JSON.parse(JSON.stringify(t.openapi.document)));
  });

  it('fails an answer it does not describe, naming the operation, the status and the mismatch', () => {
    const answer = {
      method: 'GET',
      target: '/readyz',
      host: new URL(t.authOrigin).host,
      contentType: 'application/json',
    };
    const ready = JSON.stringify({ status: 'ready', checks: { postgres: 'up', redis: 'up' } });
    expect(() => t.openapi.check({ ...answer, status: 200, text: ready })).not.toThrow();
    // The document's example once said `ok`, which the service never answers.
    expect(() => t.openapi.check({ ...answer, status: 200, text: ready.replace('ready', 'ok') })).toThrow(
      /getReadiness \(GET \/readyz\).*the body does not match 200 application\/json: \/status must be equal to constant/,
    );
    expect(() => t.openapi.check({ ...answer, status: 418, text: ready })).toThrow(
      /getReadiness .*status 418 is not documented \(documented: 200, 503\)/,
    );
    expect(() => t.openapi.check({ ...answer, status: 200, contentType: 'text/plain', text: 'ready' })).toThrow(
      /content type text\/plain is not documented for 200/,
    );
    // A path no operation describes may only be refused before routing, with the error body.
    const unknown = { ...answer, target: '/nowhere', status: 404 };
    expect(() =>
      t.openapi.check({ ...unknown, text: '{"error":"not_found","error_description":"No such resource."}' }),
    ).not.toThrow();
    expect(() => t.openapi.check({ ...unknown, status: 200, text: '{}' })).toThrow(/no operation/);
    // The console's paths are documented on the console host only: on the auth host they are unknown.
    expect(() => t.openapi.check({ ...answer, target: '/api/auth/current', status: 200, text: '{"user":{}}' })).toThrow(
      /no operation/,
    );
  });

  it('checks every answer to auth() and console() after the test’s own expectations, failing the request on a mismatch', async () => {
    const check = jest.spyOn(t.openapi, 'check');
    try {
      await t.console().get('/healthz').expect(200);
      expect(check).toHaveBeenLastCalledWith(
        expect.objectContaining({
          method: 'GET',
          target: '/healthz',
          host: new URL(t.consoleOrigin).host,
          status: 200,
        }),
      );
      check.mockImplementationOnce(() => {
        throw new Error('OpenAPI: mismatch');
      });
      await expect(t.auth().get('/healthz').expect(200)).rejects.toThrow('OpenAPI: mismatch');
      // A wrong status is reported by the test's own expectation first.
      await expect(t.auth().get('/healthz').expect(204)).rejects.toThrow('expected 204 "No Content", got 200 "OK"');
    } finally {
      check.mockRestore();
    }
  });

  it('is served on the auth host only', async () => {
    await t.console().get('/openapi.json').expect(404);
  });
});
