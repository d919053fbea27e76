import { IsString, Matches, MaxLength } from 'class-validator';
import { OptionalField } from '../http/optional-field';
import type { AuditEventView } from '../directory/audit-pages.repository';
import type { DayStats } from '../directory/daily-stats.repository';

/** `GET …/audit?type=&before=` (contract 15): an exact event type, and the `next_before` of a page. */
export class AuditQuery {
  @OptionalField() @IsString() @MaxLength(64) @Matches(/^[a-z_]+(\.[a-z_-]+)+$/) type?: string;
  @OptionalField() @IsString() @Matches(/^[1-9]\d{0,17}$/, { message: 'before must be an event id' }) before?: string;
}

/** `GET …/stats?days=`: 1 to 90, default 30 (contract 15). */
export class StatsQuery {
  @OptionalField() @IsString() @Matches(/^\d{1,2}$/, { message: 'days must be 1 to 90' }) days?: string;
}

export interface AuditPageResponse {
  readonly events: ReadonlyArray<{
    readonly id: string;
    readonly type: string;
    readonly subject: string;
    readonly created_at: string;
    readonly data: Record<string, unknown>;
  }>;
  /** Pass as `before` for the next (older) page; null on the last page. */
  readonly next_before: string | null;
}

export interface StatsResponse {
  readonly days: readonly DayStats[];
}

export function toAuditPage(events: readonly AuditEventView[], pageSize: number): AuditPageResponse {
  const page = events.slice(0, pageSize);
  return {
    events: page.map((e) => ({
      id: e.id,
      type: e.type,
      subject: e.subject,
      created_at: e.createdAt.toISOString(),
      data: e.data,
    })),
    next_before: events.length > pageSize ? (page.at(-1)?.id ?? null) : null,
  };
}
