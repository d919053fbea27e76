/**
 * Retries of calls that change nothing when repeated (the refresh grant under the service's reuse
 * interval, `GET me`): network failures, 503 and 429, with capped exponential backoff and jitter,
 * never sooner than a `Retry-After` asks (contract sections 10 and 13).
 */
export interface RetryPolicy {
  /** Tries in all, the first included. */
  readonly attempts: number;
  /** The first backoff step; each later one doubles, up to `maxDelayMs`. */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /**
   * Every try, its answer's body included, is over by this long after the first one started: a
   * try that would run past it is cut short, and none starts with less than a second left. A lost
   * answer to a refresh may hide a rotation the service made; presenting the same token again is
   * safe only within its reuse interval (30 s by default), so retries stay inside it.
   */
  readonly deadlineMs: number;
  /** One try that has not answered by then counts as a network failure. */
  readonly timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 6,
  baseDelayMs: 300,
  maxDelayMs: 8_000,
  // 5 s short of the reuse interval, which runs from the rotation (no sooner than the first try):
  // a try abandoned at the deadline left before it, but may still reach the service and be checked
  // a few seconds later (a slow uplink, a proxy's queue, a busy service).
  deadlineMs: 25_000,
  timeoutMs: 10_000,
};

/** What the retry loop needs to know about a failure. */
export interface Failure {
  /** 0 for a network failure or a timeout. */
  readonly status: number;
  /** Seconds from the answer's `Retry-After`, when it had one. */
  readonly retryAfter?: number;
}

/**
 * Network failures, 429 and every 5xx pass; anything else is an answer to act on, not to repeat.
 * A 502 or 504 is a TLS proxy's own page when its connection to the service dropped, maybe after the
 * service acted: the retry must reach the service inside the reuse interval like any lost answer.
 */
export function isTransient(failure: Failure): boolean {
  return failure.status === 0 || failure.status === 429 || failure.status >= 500;
}

/**
 * The wait before try number `attempt + 1`: at least `Retry-After` when the answer had one,
 * otherwise "equal jitter" on the doubled step, so that many clients failing together spread out.
 */
export function backoffDelay(
  failure: Failure,
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const jittered = step / 2 + (random() * step) / 2;
  if (failure.retryAfter === undefined) return Math.round(jittered);
  return failure.retryAfter * 1000 + Math.round(random() * policy.baseDelayMs);
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A try with less time than this to answer would mostly time out and hide the failure before it. */
const SHORTEST_TRY_MS = 1_000;

/**
 * Runs `task` until it succeeds, fails with something other than a transient failure, runs out of
 * tries, or the deadline leaves no time for another; the last failure is thrown as it came.
 * `task` is given the time its try may take, so that no try is still running at the deadline.
 */
export async function withRetry<T>(
  task: (timeLimitMs: number) => Promise<T>,
  asFailure: (err: unknown) => Failure | null,
  policy: RetryPolicy,
): Promise<T> {
  const deadline = Date.now() + policy.deadlineMs;
  const left = () => deadline - Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await task(Math.min(policy.timeoutMs, left()));
    } catch (err) {
      const failure = asFailure(err);
      if (failure === null || !isTransient(failure) || attempt + 1 >= policy.attempts) throw err;
      const wait = backoffDelay(failure, attempt, policy);
      if (left() - wait < SHORTEST_TRY_MS) throw err;
      await sleep(wait);
      // Timers of a page in the background may fire late.
      if (left() < SHORTEST_TRY_MS) throw err;
    }
  }
}
