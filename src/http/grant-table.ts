import { AppError } from '../errors/app-error';

/**
 * One grant of a token endpoint (RFC 6749 sections 4.1.3 and 6). It reads its own typed input out
 * of the request, refusing with `invalid_request` when a field it needs is missing, then answers.
 */
export interface Grant<Request, Input, Answer> {
  input(request: Request): Input;
  answer(input: Input): Promise<Answer>;
}

/**
 * A token endpoint's grants by `grant_type`. The endpoint's GrantTypeFirst guard is built from the
 * same list of types, and the table must hold a grant for each of them.
 */
export class GrantTable<Type extends string, Request, Answer> {
  constructor(
    private readonly grants: Readonly<Record<Type, Grant<Request, unknown, Answer>>>,
    /** The error_description of the `invalid_request` a request without `grant_type` gets. */
    private readonly missingGrantType?: string,
  ) {}

  async answer(grantType: string | undefined, request: Request): Promise<Answer> {
    if (grantType === undefined) throw new AppError('invalid_request', this.missingGrantType);
    if (!Object.hasOwn(this.grants, grantType)) throw new AppError('unsupported_grant_type');
    const grant = this.grants[grantType as Type];
    return grant.answer(grant.input(request));
  }
}
