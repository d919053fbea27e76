import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError, errorBody } from '../errors/app-error';

export const BODY_LIMIT = '16kb';

/** Endpoints that speak RFC 6749/7009 take form bodies as well as JSON (contract 3, 8). */
const FORM_PATHS = [
  /^\/management-auth\/token$/,
  /^\/t\/[^/]+\/token$/,
  /^\/t\/[^/]+\/revoke$/,
  /^\/api\/auth\/(start|sign-out)$/,
  // Sign in with Apple answers by response_mode=form_post (contract 14).
  /^\/t\/[^/]+\/providers\/callback$/,
];

/** Whether a route path takes form bodies (an Express path like `/t/:tenantId/token` matches too). */
export function takesFormBody(path: string): boolean {
  return FORM_PATHS.some((p) => p.test(path));
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * How deep a JSON body may nest. The deepest shape a route takes is an object of string lists
 * (depth 2); class-transformer and class-validator walk a body recursively, so a 16 KiB body
 * thousands of levels deep overflowed the stack into a 500.
 */
export const MAX_BODY_DEPTH = 32;

/**
 * Why a parsed JSON object is refused, if it is: nested deeper than MAX_BODY_DEPTH, or holding a
 * `__proto__` or `constructor` key at any depth (contract section 10). JSON.parse makes those
 * keys ordinary own properties, which the DTO whitelist does not see and which merging code
 * elsewhere would treat as the prototype; they are refused like any unknown field. Iterative,
 * values and their depths on two stacks, so the walk itself cannot exhaust the stack.
 */
export function bodyShapeRefusal(body: object): string | undefined {
  const values: unknown[] = [body];
  const depths: number[] = [1];
  for (let value = values.pop(); value !== undefined; value = values.pop()) {
    const depth = depths.pop() ?? 0;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_BODY_DEPTH) return 'The request body is nested too deeply.';
    for (const key of Object.keys(value)) {
      if (key === '__proto__' || key === 'constructor') return 'The request body has an unknown field.';
      values.push((value as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
  return undefined;
}

/**
 * A parser's refusal as the contract's answer. Passed on as it is, Nest turns a JSON syntax error
 * into a 400 quoting the parser's message (a piece of the body, in V8's words), and a refusal
 * without a `type` (a gzip, deflate or br body that does not inflate) or one with a type nothing
 * knows (more form fields than `parameterLimit`) into a logged 500. The parsers' 5xx stay errors.
 */
function parserRefusal(err: unknown): unknown {
  const { status, type } = (err ?? {}) as { status?: unknown; type?: unknown };
  if (typeof status !== 'number' || status < 400 || status >= 500) return err;
  if (type === 'entity.too.large') return new AppError('payload_too_large');
  return new AppError('invalid_request', 'The request body is not valid.');
}

/**
 * Bodies: at most 16 KiB (413), JSON everywhere, form-encoding only where OAuth needs it, and a
 * JSON body must be an object (strict shapes are then enforced by the DTOs). One middleware that a
 * request without a body passes straight through: most requests are GETs.
 */
export function bodyRules(): (req: Request, res: Response, next: NextFunction) => void {
  const json = express.json({ limit: BODY_LIMIT, strict: true, type: 'application/json' });
  const form = express.urlencoded({ limit: BODY_LIMIT, extended: false, parameterLimit: 20 });
  const refuse = (res: Response, description: string): void => {
    res.status(400).json(errorBody('invalid_request', description));
  };
  return (req, res, next) => {
    if (!hasBody(req)) return next();
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    const parser =
      type === 'application/json'
        ? json
        : type === 'application/x-www-form-urlencoded' && takesFormBody(req.path)
          ? form
          : undefined;
    if (!parser) return refuse(res, 'Content-Type must be application/json.');
    parser(req, res, (err?: unknown) => {
      if (err) return next(parserRefusal(err));
      const body: unknown = req.body;
      if (body === undefined) return next();
      const isObject = typeof body === 'object' && body !== null && !Array.isArray(body);
      const refusal = isObject ? bodyShapeRefusal(body) : 'The request body must be a JSON object.';
      if (refusal === undefined) return next();
      refuse(res, refusal);
    });
  };
}
