import { loadConfig, type RateLimitBudget } from '../../src/config/config';
import { emailGuessBound } from '../../src/platform/email-codes/email-code-budgets';
import { CODE_ALLOWANCE_SECONDS } from '../../src/platform/email-codes/email-codes.store';
import { productionConfigEnv } from '../support/config-env';

const production = loadConfig(productionConfigEnv());

/** The rate limiter's GCRA (src/platform/rate-limit/rate-limiter.ts), on a clock of whole seconds. */
function gcra(budget: RateLimitBudget): (now: number) => boolean {
  const interval = budget.windowSeconds / budget.limit;
  let tat = 0;
  return (now) => {
    const newTat = Math.max(tat, now) + interval;
    if (newTat - budget.windowSeconds > now) return false;
    tat = newTat;
    return true;
  };
}

/**
 * OWASP ASVS V2.2.1 allows at most 100 failed attempts an hour per account. This is
 * the most an attacker with unlimited networks and flows gets. A fresh code buys
 * EMAIL_CODE_MAX_ATTEMPTS guesses, resends keep the count (test/e2e/flood/code-guessing), and the
 * guesses of a fresh code are spent within CODE_ALLOWANCE_SECONDS of its send.
 */
describe('wrong guesses per hour per address under the production defaults', () => {
  it('are bounded by at most 100', () => {
    expect(production.rateLimits.emailSendAddress).toEqual({ limit: 6, windowSeconds: 3600 });
    expect(emailGuessBound(production)).toBe(90);
  });

  it('a simulated attacker who sends whenever the address budget allows and saves every guess for one hour gets no more', () => {
    const hour = 3600;
    const take = gcra(production.rateLimits.emailSendAddress);
    const sends: number[] = [];
    // Six hours of trying to send a fresh code every second, from a full bucket.
    for (let now = 0; now < 6 * hour; now++) if (take(now)) sends.push(now);
    // The attacker places each code's guesses anywhere in [send, send + allowance]: all of them
    // land in the hour [t, t + hour] when the send falls in [t - allowance, t + hour].
    let worst = 0;
    for (let t = -CODE_ALLOWANCE_SECONDS; t < 6 * hour; t++) {
      const usable = sends.filter((s) => s >= t - CODE_ALLOWANCE_SECONDS && s <= t + hour).length;
      worst = Math.max(worst, usable * production.ttl.emailCodeMaxAttempts);
    }
    expect(worst).toBeLessThanOrEqual(emailGuessBound(production));
    expect(worst).toBeLessThanOrEqual(100);
  });

  it('grows with the per-address budget, so a looser one is visible in review', () => {
    const loose = {
      ...production,
      rateLimits: { ...production.rateLimits, emailSendAddress: { limit: 20, windowSeconds: 3600 } },
    };
    expect(emailGuessBound(loose)).toBeGreaterThan(100);
  });
});
