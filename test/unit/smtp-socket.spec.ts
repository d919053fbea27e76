import { createServer, Socket, type Server } from 'node:net';
import type { AppConfig } from '../../src/config/config';
import { connectWithoutNagle, Mailer } from '../../src/platform/mail/mailer';
import { SmtpCatcher } from '../support/smtp-catcher';

/** The socket factory nodemailer's pool uses for every SMTP connection. */
describe('SMTP connections without Nagle', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((s) => s.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const connectTo = (p: number) =>
    new Promise<{ err: Error | null; socket?: Socket }>((resolve) =>
      connectWithoutNagle({ host: '127.0.0.1', port: p, connectionTimeout: 2000 }, (err, opts) =>
        resolve({ err, socket: opts?.connection }),
      ),
    );

  it('hands nodemailer a connected socket with Nagle off', async () => {
    const noDelay = jest.spyOn(Socket.prototype, 'setNoDelay');
    try {
      const { err, socket } = await connectTo(port);
      expect(err).toBeNull();
      expect(socket?.remotePort).toBe(port);
      expect(noDelay.mock.contexts).toContain(socket);
      expect(noDelay.mock.calls.at(noDelay.mock.contexts.indexOf(socket as Socket))).toEqual([true]);
      socket?.destroy();
    } finally {
      noDelay.mockRestore();
    }
  });

  it('passes a refused connection on as an error with its code', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const unused = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { err, socket } = await connectTo(unused);
    expect(err).toMatchObject({ code: 'ECONNREFUSED' });
    expect(socket).toBeUndefined();
  });

  it.each(['pool=true', 'pool=false'])('is how the mailer reaches the SMTP server (%s)', async (pool) => {
    const catcher = await SmtpCatcher.start();
    // Nagle settings of outgoing connections only, by the port they reach (the catcher's own
    // accepted sockets live in this process too).
    const outgoing: Array<{ port: number | undefined; noDelay: boolean | undefined }> = [];
    const original = Socket.prototype.setNoDelay;
    const setNoDelay = jest.spyOn(Socket.prototype, 'setNoDelay').mockImplementation(function (
      this: Socket,
      noDelay?: boolean,
    ) {
      if (this.connecting) this.once('connect', () => outgoing.push({ port: this.remotePort, noDelay }));
      return original.call(this, noDelay);
    });
    const mailer = new Mailer({
      mail: { transport: 'smtp', smtpUrl: `${catcher.url}?${pool}`, from: 'svc@localhost' },
      dependencyTimeoutMs: 2000,
    } as AppConfig);
    try {
      const to = 'player@example.com';
      await expect(mailer.send({ to, subject: 'code', text: 'Your code is 123456.' })).resolves.toBe('sent');
      expect(await catcher.waitForCode(to)).toBe('123456');
      expect(outgoing).toContainEqual({ port: Number(new URL(catcher.url).port), noDelay: true });
    } finally {
      setNoDelay.mockRestore();
      mailer.onApplicationShutdown();
      await catcher.stop();
    }
  });
});
