import { createServer, Socket, type Server } from 'node:net';
import { connectWithoutNagle } from '../../src/platform/mail/mailer';

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
});
