import { RequestMethod, type INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { CACHE_POLICY_KEY, DEFAULT_CACHE_POLICY } from '../../src/http/cache-policy';
import { POLICY_KEY } from '../../src/http/policy.decorator';
import { ROUTE_KEY, type RouteDeclaration } from '../../src/http/route';

/**
 * Every route of the app as `METHOD /path -> policy, cache: Cache-Control[, HEAD refused]`, sorted, from Nest's
 * metadata. A route mounted without a declaration (src/http/route.ts), or whose declaration says
 * another method, path or policy than Nest mounted, is marked `UNDECLARED`.
 */
export function routeTable(app: INestApplication): string[] {
  const rows: string[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const ctor = wrapper.metatype as (new (...args: unknown[]) => unknown) | null;
      if (!ctor) continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, ctor) ?? '');
      const proto = ctor.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(proto)) {
        const handler = proto[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const path: unknown = Reflect.getMetadata(PATH_METADATA, handler);
        if (typeof path !== 'string') continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
        const policy: unknown = Reflect.getMetadata(POLICY_KEY, handler) ?? 'NONE (denied)';
        const cache: unknown = Reflect.getMetadata(CACHE_POLICY_KEY, handler) ?? DEFAULT_CACHE_POLICY;
        const full = `/${[base, path].filter((p) => p && p !== '/').join('/')}`.replace(/\/+/g, '/');
        const declared = Reflect.getMetadata(ROUTE_KEY, handler) as RouteDeclaration | undefined;
        const matches =
          declared !== undefined && declared.method === method && declared.path === full && declared.policy === policy;
        const head = declared?.sideEffects ? ', HEAD refused' : '';
        rows.push(
          `${method} ${full} -> ${String(policy)}, cache: ${String(cache)}${head}${matches ? '' : ', UNDECLARED'}`,
        );
      }
    }
  }
  return rows.sort();
}
