import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { SessionRecordEntity } from '../platform/database/entities/session-record.entity';

@Injectable()
export class SessionRecordsRepository {
  constructor(@InjectRepository(SessionRecordEntity) private readonly records: Repository<SessionRecordEntity>) {}

  async record(
    session: Omit<SessionRecordEntity, 'createdAt'>,
    m: EntityManager = this.records.manager,
  ): Promise<void> {
    await m.insert(SessionRecordEntity, session);
  }
}
