import { spawn, type ChildProcess } from 'node:child_process';
import Redis from 'ioredis';
import { freePort } from './test-app';

/**
 * A Redis server of the test's own, so a test can stop, pause or kill it without touching the
 * shared one. Nothing is kept on disk, as in the machine's own Redis.
 */
export class PrivateRedis {
  private proc: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.restart();
    return r;
  }

  async restart(): Promise<void> {
    this.proc = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + 10_000;
    for (;;) {
      const probe = new Redis(this.port, '127.0.0.1', {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        probe.disconnect();
        if (Date.now() > deadline) throw new Error('private redis did not start');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  /** SIGKILL: the server vanishes mid-flow, connections reset, data is gone. */
  async kill(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      p.once('exit', () => resolve());
      p.kill('SIGKILL');
    });
    this.proc = null;
  }

  /** SIGSTOP/SIGCONT: the server hangs with connections open, then resumes with its data. */
  pause(): void {
    this.proc?.kill('SIGSTOP');
  }

  resume(): void {
    this.proc?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    this.resume();
    await this.kill();
  }
}
