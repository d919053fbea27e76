import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { checkClientSettings, type ClientSettings } from '../directory/client-settings';
import { ClientsRepository, type NewClient } from '../directory/clients.repository';
import { AppError } from '../errors/app-error';
import { toClientResponse, type ClientResponse, type CreateClientDto, type UpdateClientDto } from './clients.dto';
import { consoleRecord } from './console-audit';
import type { MemberTenantAccess } from './tenant-membership.guard';
import { CLIENT_ID_PATTERN, newRecordId } from '../directory/identifiers';

/**
 * The console's changes of a tenant's clients (contract 15), under the same rules as the admin
 * CLI's `client create` (src/directory/client-settings.ts). Each change commits with its
 * `console.client.*` audit row. A new browser client's web origins answer CORS at once: the
 * guest module's caches treat an unknown origin or client id as a miss and read again.
 */
@Injectable()
export class ConsoleClientsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'nodeEnv'>,
    private readonly clients: ClientsRepository,
  ) {}

  async create(access: MemberTenantAccess, body: CreateClientDto): Promise<ClientResponse> {
    const settings = this.checked({
      type: body.type,
      scopes: body.scopes,
      redirectUris: body.redirect_uris,
      webOrigins: body.web_origins,
    });
    const client: NewClient = {
      id: newRecordId('client'),
      tenantId: access.tenant.id,
      name: body.name.trim(),
      enabled: true,
      ...settings,
      secretDigest: null,
    };
    await this.clients.insertRecorded(client, [
      consoleRecord(access, 'client.create', client.id, { type: settings.type }),
    ]);
    return toClientResponse({ ...client, webOrigins: settings.webOrigins, createdAt: new Date() });
  }

  async update(access: MemberTenantAccess, clientId: string, body: UpdateClientDto): Promise<ClientResponse> {
    const changed = Object.keys(body).filter((k) => body[k as keyof UpdateClientDto] !== undefined);
    if (changed.length === 0) throw new AppError('invalid_request', 'Name at least one field to change.');
    if (!CLIENT_ID_PATTERN.test(clientId)) throw noSuchClient();
    const updated = await this.clients.updateRecorded(access.tenant.id, clientId, (current) => {
      const settings = this.checked({
        type: current.type,
        scopes: body.scopes ?? current.scopes,
        redirectUris: body.redirect_uris ?? current.redirectUris,
        webOrigins: body.web_origins ?? current.webOrigins,
      });
      return {
        next: {
          ...current,
          ...settings,
          name: body.name?.trim() ?? current.name,
          enabled: body.enabled ?? current.enabled,
        },
        records: [consoleRecord(access, 'client.update', clientId, { fields: changed.sort().join(' ') })],
      };
    });
    if (!updated) throw noSuchClient();
    return toClientResponse(updated);
  }

  /** The settings as the shared rules accept them, or 400 naming the field and the reason. */
  private checked(given: Parameters<typeof checkClientSettings>[0]): ClientSettings {
    const checked = checkClientSettings(given, this.config.nodeEnv === 'production');
    if ('problem' in checked)
      throw new AppError('invalid_request', `${checked.problem.field}: ${checked.problem.message}`);
    return checked.settings;
  }
}

const noSuchClient = (): AppError => new AppError('not_found', 'No such client in this tenant.');
