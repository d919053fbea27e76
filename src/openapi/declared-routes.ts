import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { ROUTE_KEY, type RouteDeclaration } from '../http/route';

/**
 * The declarations of every mounted handler, read from Nest's metadata: the document knows the
 * routes without this feature importing any other.
 */
@Injectable()
export class DeclaredRoutes {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  list(): RouteDeclaration[] {
    return this.discovery.getControllers().flatMap((wrapper) => {
      const proto = (wrapper.metatype?.prototype ?? null) as Record<string, unknown> | null;
      if (proto === null) return [];
      return this.scanner.getAllMethodNames(proto).flatMap((name) => {
        const handler = proto[name];
        if (typeof handler !== 'function') return [];
        const declaration = this.reflector.get<RouteDeclaration | undefined>(ROUTE_KEY, handler);
        return declaration ? [declaration] : [];
      });
    });
  }
}
