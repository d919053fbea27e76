import { eventually } from './eventually';

/** The completion lines (`req.id` and `res`) of one request among collected JSON log lines. */
export function loggedRequests(lines: readonly string[], id: string): Array<{ statusCode: number }> {
  return lines
    .join('')
    .split('\n')
    .filter((l) => l.includes(id))
    .map((l) => JSON.parse(l) as { req?: { id?: string }; res?: { statusCode: number } })
    .filter((l) => l.req?.id === id && l.res)
    .map((l) => ({ statusCode: l.res?.statusCode as number }));
}

/**
 * Waits until the request with this id has written its completion line: every line the service
 * wrote while answering it comes before, so a test can then assert what the log does not hold.
 */
export async function untilRequestLogged(lines: readonly string[], id: string): Promise<void> {
  await eventually(() => Promise.resolve(loggedRequests(lines, id).length > 0), 5_000);
}
