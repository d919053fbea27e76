import { connect } from 'node:net';

export interface RawAnswer {
  readonly statusLine: string;
  readonly status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The first answer in `text`, once its head and `Content-Length` bytes of body are all there. */
function parseAnswer(text: string): RawAnswer | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const body = text.slice(end + 4);
  const length = Number(headers['content-length'] ?? 0);
  if (Buffer.byteLength(body, 'latin1') < length) return undefined;
  return { statusLine, status: Number(statusLine.split(' ')[1]), headers, body: body.slice(0, length) };
}

/**
 * Writes `bytes` as they are on a fresh TCP connection and resolves with the first answer, for
 * requests no HTTP client would send (a broken request line, a header without a colon).
 * Whatever the server sent is parsed when it closes the connection, a bare answer included.
 */
export function rawExchange(port: number, bytes: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const settle = (): void => {
      const answer = parseAnswer(received);
      socket.destroy();
      if (answer) resolve(answer);
      else reject(new Error(`no complete answer: ${JSON.stringify(received.slice(0, 200))}`));
    };
    socket.setTimeout(5_000, settle);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (parseAnswer(received)) settle();
    });
    socket.on('close', settle);
    socket.write(bytes, 'latin1');
  });
}

/** Everything the server sends on a fresh connection after `bytes`, until it closes the connection. */
export function rawTranscript(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error('the server kept the connection open')));
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('close', () => resolve(received));
    socket.write(bytes, 'latin1');
  });
}
