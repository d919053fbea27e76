import { Injectable, PipeTransform } from '@nestjs/common';
import { CONTROL_PLANE_TENANT_ID } from '../directory/control-plane';
import { AppError } from '../errors/app-error';
import { TENANT_ID_PATTERN } from '../directory/identifiers';

/** A path tenant id that cannot name a tenant is answered like an unknown tenant. */
@Injectable()
export class TenantIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!TENANT_ID_PATTERN.test(value) || value === CONTROL_PLANE_TENANT_ID) throw new AppError('tenant_not_found');
    return value;
  }
}
