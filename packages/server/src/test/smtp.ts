import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, beforeEach } from 'vitest';

export interface CapturedEmail {
  readonly to: string[];
  /** The raw message with quoted-printable decoded, so links and codes read as sent. */
  readonly text: string;
}

/**
 * A real SMTP server on 127.0.0.1 (smtp-server) that keeps what it receives. `failNext` makes the
 * next deliveries fail with a temporary error, as a mail server under trouble does.
 */
export interface TestSmtp {
  readonly port: number;
  readonly url: string;
  readonly received: CapturedEmail[];
  failNext: number;
  close(): Promise<void>;
}

/**
 * A test SMTP server for one test file: started before its tests (its address set as `SMTP_URL` in
 * `env`, which the file passes to `useTestService`), emptied and healthy before each test, closed
 * after them.
 */
export function useTestSmtp(env: Record<string, string>): () => TestSmtp {
  let smtp: TestSmtp | undefined;
  beforeAll(async () => {
    smtp = await startTestSmtp();
    env['SMTP_URL'] = smtp.url;
  });
  afterAll(async () => {
    await smtp?.close();
  });
  beforeEach(() => {
    if (smtp === undefined) return;
    smtp.received.length = 0;
    smtp.failNext = 0;
  });
  return () => {
    if (smtp === undefined) throw new Error('the test SMTP server runs only inside the tests');
    return smtp;
  };
}

export async function startTestSmtp(): Promise<TestSmtp> {
  const received: CapturedEmail[] = [];
  const state = { failNext: 0 };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (state.failNext > 0) {
          state.failNext -= 1;
          callback(Object.assign(new Error('Mailbox temporarily unavailable'), { responseCode: 451 }));
          return;
        }
        received.push({
          to: session.envelope.rcptTo.map((address) => address.address),
          text: decodeQuotedPrintable(Buffer.concat(chunks).toString('utf8')),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('the SMTP server has no port');
  return {
    port: address.port,
    url: `smtp://127.0.0.1:${address.port}`,
    received,
    get failNext() {
      return state.failNext;
    },
    set failNext(value: number) {
      state.failNext = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The 43-character token of an email: from a `token=` link, or alone on a line. */
export function tokenIn(text: string): string {
  const match = /token=([A-Za-z0-9_-]{43})/.exec(text) ?? /^([A-Za-z0-9_-]{43})$/m.exec(text);
  if (match?.[1] === undefined) throw new Error(`no token in the email:\n${text}`);
  return match[1];
}
