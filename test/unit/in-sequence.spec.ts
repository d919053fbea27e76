import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { inSequence } from '../../src/http/in-sequence';

const req = {} as Request;
const res = {} as Response;

/** Runs the sequence once and resolves with what it passed to Express's `next`. */
function run(steps: RequestHandler[]): Promise<unknown> {
  return new Promise((resolve) => {
    inSequence(steps)(req, res, ((err?: unknown) => resolve(err ?? 'done')) as NextFunction);
  });
}

describe('inSequence: the edge middleware mounted as one', () => {
  it('runs every step in order, each with the same request and response, then hands on', async () => {
    const seen: string[] = [];
    const step =
      (name: string): RequestHandler =>
      (q, s, next) => {
        expect([q, s]).toStrictEqual([req, res]);
        seen.push(name);
        next();
      };
    await expect(run([step('a'), step('b'), step('c')])).resolves.toBe('done');
    expect(seen).toStrictEqual(['a', 'b', 'c']);
  });

  it('an error ends the run and reaches Express; later steps do not run', async () => {
    const error = new Error('refused');
    const later = jest.fn();
    await expect(run([(_q, _s, next) => next(error), later])).resolves.toBe(error);
    expect(later).not.toHaveBeenCalled();
  });

  it('a throw is handed on as the error, also from a step resumed after I/O', async () => {
    const error = new Error('thrown');
    const thrower: RequestHandler = () => {
      throw error;
    };
    await expect(run([thrower])).resolves.toBe(error);
    await expect(run([(_q, _s, next) => setImmediate(() => next()), thrower])).resolves.toBe(error);
  });

  it('a rejected promise is handed on as the error, as Express 5 does', async () => {
    const error = new Error('async failure');
    await expect(run([() => Promise.reject(error)])).resolves.toBe(error);
  });

  it('a step that answers without calling next ends the run', async () => {
    const later = jest.fn();
    const handed = jest.fn();
    inSequence([() => undefined, later])(req, res, handed);
    await new Promise((r) => setImmediate(r));
    expect(later).not.toHaveBeenCalled();
    expect(handed).not.toHaveBeenCalled();
  });

  it('a step may call next later (after I/O)', async () => {
    const seen: string[] = [];
    await run([
      (_q, _s, next) => setImmediate(() => (seen.push('io'), next())),
      (_q, _s, next) => (seen.push('after'), next()),
    ]);
    expect(seen).toStrictEqual(['io', 'after']);
  });
});
