import { Injectable, PipeTransform } from '@nestjs/common';
import { AppError } from '../errors/app-error';

/** A path provider id that cannot name a provider (see `provider add`) is answered like an unknown one. */
@Injectable()
export class ProviderIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!/^[a-z][a-z0-9-]{1,31}$/.test(value)) throw new AppError('not_found', 'No such identity provider.');
    return value;
  }
}
