import { applyDecorators } from '@nestjs/common';
import { ArrayMaxSize, IsArray, IsBoolean, IsString, Matches, MaxLength } from 'class-validator';
import { OptionalField } from '../http/optional-field';
import { webOriginsOf } from '../directory/web-origins';
import type { ClientListResponse } from './management.dto';
import type { ClientRecord } from '../directory/records';

const NOT_BLANK = /\S/;
/**
 * No control characters: PostgreSQL refuses a NUL in text, which made the insert fail with a 500
 * instead of this 400, and a line break or an escape garbles the one-line name the console shows
 * in its lists and in the confirmation that names the client.
 */
const NO_CONTROL_CHARACTERS = /^\P{Cc}*$/u;

/** A client's name: 1–100 characters, not blank, printable. */
const ClientName = (): PropertyDecorator =>
  applyDecorators(
    IsString(),
    MaxLength(100),
    Matches(NOT_BLANK, { message: 'name must not be blank' }),
    Matches(NO_CONTROL_CHARACTERS, { message: 'name must not contain control characters' }),
  );

/** A list of strings, as the client list shows scopes, redirect URIs and web origins (contract 15). */
const Strings = (maxItems: number, maxLength: number): PropertyDecorator =>
  applyDecorators(IsArray(), ArrayMaxSize(maxItems), IsString({ each: true }), MaxLength(maxLength, { each: true }));

/** `POST /management/tenants/{id}/clients` (contract 15); the settings are checked by checkClientSettings. */
export class CreateClientDto {
  @ClientName() name!: string;
  @IsString() @MaxLength(16) type!: string;
  @Strings(8, 64) scopes!: string[];
  @Strings(10, 2048) redirect_uris!: string[];
  @Strings(20, 512) web_origins!: string[];
}

/** `PATCH /management/tenants/{id}/clients/{clientId}`: any of these; the type never changes. */
export class UpdateClientDto {
  @OptionalField() @ClientName() name?: string;
  @OptionalField() @IsBoolean() enabled?: boolean;
  @OptionalField() @Strings(8, 64) scopes?: string[];
  @OptionalField() @Strings(10, 2048) redirect_uris?: string[];
  @OptionalField() @Strings(20, 512) web_origins?: string[];
}

/** A client as the console sees it (contract 15): never a secret or its digest. */
export interface ClientResponse {
  /** As in the client list (web origins: the redirect URIs' origins and the registered ones), plus redirect URIs. */
  readonly client: ClientListResponse['clients'][number] & { readonly redirect_uris: readonly string[] };
}

export function toClientResponse(c: ClientRecord): ClientResponse {
  return {
    client: {
      client_id: c.id,
      name: c.name,
      type: c.type,
      enabled: c.enabled,
      scopes: [...c.scopes],
      redirect_uris: [...c.redirectUris],
      web_origins: webOriginsOf(c),
    },
  };
}
