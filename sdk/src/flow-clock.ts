/**
 * A browser flow lives an hour from the call that started it (contract 6), and the steps of one
 * linking or sign-in (an intent, an email code, a proof, the upgrade) must all fall within that
 * hour. A page open for hours keeps one flow id, so steps begun near the hour's end would be
 * refused at the next one (403 "Unknown browser flow."), their code and intent lost with it. So
 * the client begins each new sequence of steps in a fresh flow once the current one is past half
 * its hour and holds nothing this page started that is still live.
 *
 * What the page knows of its flow (when it was first answered in it, until when something it
 * started there lives) is kept per tab in `sessionStorage` where there is one, beside the flow id
 * a game keeps across reloads; elsewhere in memory. Times are the wall clock's: one set forward
 * moves to a fresh flow early, which costs nothing, one set back keeps the flow as before.
 */
export const FLOW_LIFETIME_MS = 3_600_000;

interface FlowTimes {
  readonly id: string;
  readonly startedAt: number;
  readonly holdsUntil: number;
}

type TabStorage = Pick<Storage, 'getItem' | 'setItem'>;

/** The tab's `sessionStorage`, or null where there is none or the browser refuses it. */
function tabStorage(): TabStorage | null {
  try {
    return (globalThis as { sessionStorage?: TabStorage }).sessionStorage ?? null;
  } catch {
    return null;
  }
}

export class FlowClock {
  private kept: FlowTimes | null = null;
  private readonly storage = tabStorage();

  constructor(private readonly key: string) {}

  /** A call in this flow was answered: the first answer is when its hour began, as far as the page knows. */
  answered(flowId: string, now = Date.now()): void {
    if (this.read()?.id !== flowId) this.write({ id: flowId, startedAt: now, holdsUntil: 0 });
  }

  /** Something the page started in the flow (an intent, a code, a proof) lives this long. */
  holds(flowId: string, seconds: number, now = Date.now()): void {
    const times = this.read();
    if (times?.id === flowId) this.write({ ...times, holdsUntil: Math.max(times.holdsUntil, now + seconds * 1000) });
  }

  /** Whether a new sequence of steps should begin in a fresh flow rather than in this one. */
  spent(flowId: string, now = Date.now()): boolean {
    const times = this.read();
    return times?.id === flowId && now - times.startedAt > FLOW_LIFETIME_MS / 2 && now >= times.holdsUntil;
  }

  private read(): FlowTimes | null {
    if (!this.storage) return this.kept;
    try {
      const parsed: unknown = JSON.parse(this.storage.getItem(this.key) ?? 'null');
      return isFlowTimes(parsed) ? parsed : null;
    } catch {
      return this.kept;
    }
  }

  private write(times: FlowTimes): void {
    this.kept = times;
    try {
      this.storage?.setItem(this.key, JSON.stringify(times));
    } catch {
      // Storage full or refused: memory keeps the times for this page's life.
    }
  }
}

function isFlowTimes(v: unknown): v is FlowTimes {
  if (typeof v !== 'object' || v === null) return false;
  const t = v as Record<string, unknown>;
  return typeof t.id === 'string' && typeof t.startedAt === 'number' && typeof t.holdsUntil === 'number';
}
