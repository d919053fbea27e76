import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * The edge's middleware mounted as one: each step runs when the one before calls `next()`; an
 * error, a throw, a rejected promise or an answer without `next()` ends the run, as in Express.
 * Mounted apart, every step cost Express's router a layer match and a path trim per request: 3 of
 * the static route's 27 µs (docs/performance.md).
 */
export function inSequence(steps: readonly RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction): void => {
    let index = 0;
    const next = (err?: unknown): void => {
      if (err !== undefined && err !== null) return done(err);
      const step = steps[index++];
      if (step === undefined) return done();
      // Express catches what a layer throws; a step resumed from another's callback (after a body
      // is read) runs outside its layer, so the sequence catches for it.
      try {
        const returned: unknown = step(req, res, next);
        if (returned instanceof Promise) returned.catch((e: unknown) => done(e ?? new Error('rejected middleware')));
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
