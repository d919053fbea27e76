import { ValidateIf } from 'class-validator';

/**
 * A body or query field that may be left out. class-validator's `IsOptional` also skips `null`,
 * so `{"name": null}` passed as "not given" and a PATCH answered 200 for a change it never made;
 * here only a missing field skips the field's rules, and `null` is refused like any wrong type.
 */
export const OptionalField = (): PropertyDecorator =>
  ValidateIf((_object: object, value: unknown) => value !== undefined);
