import { Injectable, PipeTransform } from '@nestjs/common';
import { AppError } from '../errors/app-error';

/** A path tenant id that cannot name a tenant is answered like an unknown tenant. */
@Injectable()
export class TenantIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!/^[a-z0-9][a-z0-9-]{1,62}$/.test(value) || value === 'control-plane') throw new AppError('tenant_not_found');
    return value;
  }
}
