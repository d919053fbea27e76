import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { SecretBox } from '../platform/crypto/secret-box';
import { ChatPlatformAppEntity } from '../platform/database/entities/chat-platform-app.entity';

export interface ChatPlatformApp {
  readonly tenantId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUri: string;
}

const purpose = (tenantId: string): string => `chat-platform-secret:${tenantId}`;

/** A tenant's chat-platform application; the secret is sealed at rest and bound to its tenant. */
@Injectable()
export class ChatPlatformAppsRepository {
  constructor(
    @InjectRepository(ChatPlatformAppEntity) private readonly apps: Repository<ChatPlatformAppEntity>,
    private readonly box: SecretBox,
  ) {}

  async configure(app: ChatPlatformApp): Promise<void> {
    await this.apps.upsert(
      {
        tenantId: app.tenantId,
        clientId: app.clientId,
        clientSecretSealed: this.box.seal(app.clientSecret, purpose(app.tenantId)),
        redirectUri: app.redirectUri,
        updatedAt: new Date(),
      },
      ['tenantId'],
    );
  }

  async find(tenantId: string): Promise<ChatPlatformApp | null> {
    const row = await this.apps.findOneBy({ tenantId });
    if (!row) return null;
    const clientSecret = this.box.open(row.clientSecretSealed, purpose(tenantId));
    if (clientSecret === null) throw new Error(`chat platform secret of tenant ${tenantId} cannot be opened`);
    return { tenantId, clientId: row.clientId, clientSecret, redirectUri: row.redirectUri };
  }

  /**
   * Contract 12 rotation: every secret sealed under an older privacy key is sealed again under the
   * current one, so the old key can leave PRIVACY_KEY. The update only lands if the row is
   * unchanged since it was read (a concurrent `chat configure` wins).
   */
  async resealAll(): Promise<{ resealed: number; current: number; unreadable: string[] }> {
    const result = { resealed: 0, current: 0, unreadable: [] as string[] };
    for (const row of await this.apps.find({ order: { tenantId: 'ASC' } })) {
      const opened = this.box.openWithKey(row.clientSecretSealed, purpose(row.tenantId));
      if (!opened) result.unreadable.push(row.tenantId);
      else if (opened.current) result.current++;
      else {
        await this.apps.update(
          { tenantId: row.tenantId, clientSecretSealed: row.clientSecretSealed },
          { clientSecretSealed: this.box.seal(opened.plaintext, purpose(row.tenantId)), updatedAt: new Date() },
        );
        result.resealed++;
      }
    }
    return result;
  }
}
