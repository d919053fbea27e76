import { spawn, type ChildProcess } from 'node:child_process';
import Redis from 'ioredis';
import { freePort } from './test-app';

/**
 * A Redis server of the test's own, so a test can stop, pause or kill it without touching the
 * shared one. Nothing is kept on disk, as in the machine's own Redis.
 */
export class PrivateRedis {
  private proc: ChildProcess | null = null;
  private admin: Redis | null = null;
  private control: Redis | null = null;

  private constructor(
    readonly port: number,
    /** Extra redis-server options, e.g. ['--maxmemory-policy', 'allkeys-lru']. */
    private readonly options: readonly string[],
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(options: readonly string[] = []): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort(), options);
    await r.restart();
    return r;
  }

  async restart(): Promise<void> {
    this.proc = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...this.options],
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

  /**
   * What the service may run: the ACL rules of the `default` user it connects as, set through an
   * admin user of the test's own. `serviceMay('-@all')` makes Redis refuse it every command at
   * once, without a queued command running later; `serviceMay('+@all')` gives them back.
   */
  async serviceMay(...rules: string[]): Promise<void> {
    if (!this.admin) {
      const admin = new Redis(this.port, '127.0.0.1');
      await admin.call('ACL', 'SETUSER', 'svc-test-admin', 'on', 'nopass', '~*', '&*', '+@all');
      await admin.call('AUTH', 'svc-test-admin', 'x');
      this.admin = admin;
    }
    await this.admin.call('ACL', 'SETUSER', 'default', 'on', 'nopass', '~*', '&*', '+@all', ...rules);
  }

  /**
   * Redis refuses every write while `body` runs: made a replica of a port nobody serves, it
   * answers READONLY (a 503, contract section 10) and still serves reads, so bearer checks pass and
   * the dataset is kept (a replica drops it only once a master's sync arrives).
   */
  async withWritesRefused(body: () => Promise<void>): Promise<void> {
    this.control ??= new Redis(this.port, '127.0.0.1');
    await this.control.call('REPLICAOF', '127.0.0.1', '1');
    try {
      await body();
    } finally {
      await this.control.call('REPLICAOF', 'NO', 'ONE');
    }
  }

  async stop(): Promise<void> {
    this.admin?.disconnect();
    this.admin = null;
    this.control?.disconnect();
    this.control = null;
    this.resume();
    await this.kill();
  }
}
