import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';

const TYPE_TXT = 16;
const CLASS_IN = 1;
const RCODE_NXDOMAIN = 3;
const RCODE_NOTIMP = 4;
/** A character-string in a TXT record holds at most 255 bytes; longer texts go in several. */
const CHARACTER_STRING_BYTES_MAX = 255;

/**
 * A small authoritative DNS server on loopback UDP for tests: it answers TXT queries for the names
 * in `records` (several records per name, each text split into 255-byte strings as the wire format
 * requires), NOERROR with no answer for a name listed with no records, NXDOMAIN for any other name.
 * The wire format (RFC 1035, section 4) by hand: only what a resolver's TXT query needs.
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, for `DNS_SERVERS`. */
  readonly address: string;
  /** Lower-case name → the texts of its TXT records. */
  readonly records: Map<string, string[]>;
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const records = new Map<string, string[]>();
  const socket = createSocket('udp4');
  socket.on('message', (message, remote) => answer(socket, records, message, remote));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    records,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

function answer(socket: Socket, records: ReadonlyMap<string, string[]>, query: Buffer, remote: RemoteInfo): void {
  const question = readQuestion(query);
  if (question === undefined) return;
  const texts = records.get(question.name.toLowerCase());
  const rcode = question.type !== TYPE_TXT || question.class !== CLASS_IN ? RCODE_NOTIMP : texts === undefined ? RCODE_NXDOMAIN : 0;
  const answers = rcode === 0 ? (texts ?? []).map(txtAnswer) : [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0); // the query's id
  const recursionDesired = query.readUInt16BE(2) & 0x0100;
  header.writeUInt16BE(0x8000 | 0x0400 | recursionDesired | rcode, 2); // QR, AA, RD as asked, RCODE
  header.writeUInt16BE(1, 4); // QDCOUNT
  header.writeUInt16BE(answers.length, 6); // ANCOUNT
  const response = Buffer.concat([header, query.subarray(12, question.end), ...answers]);
  socket.send(response, remote.port, remote.address);
}

function readQuestion(query: Buffer): { name: string; type: number; class: number; end: number } | undefined {
  if (query.length < 12 || query.readUInt16BE(4) < 1) return undefined;
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    const length = query[offset];
    if (length === undefined || length > 63) return undefined;
    offset += 1;
    if (length === 0) break;
    labels.push(query.subarray(offset, offset + length).toString('latin1'));
    offset += length;
  }
  if (offset + 4 > query.length) return undefined;
  return { name: labels.join('.'), type: query.readUInt16BE(offset), class: query.readUInt16BE(offset + 2), end: offset + 4 };
}

function txtAnswer(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const strings: Buffer[] = [];
  for (let start = 0; start < bytes.length || start === 0; start += CHARACTER_STRING_BYTES_MAX) {
    const chunk = bytes.subarray(start, start + CHARACTER_STRING_BYTES_MAX);
    strings.push(Buffer.from([chunk.length]), chunk);
  }
  const rdata = Buffer.concat(strings);
  const fixed = Buffer.alloc(12);
  fixed.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
  fixed.writeUInt16BE(TYPE_TXT, 2);
  fixed.writeUInt16BE(CLASS_IN, 4);
  fixed.writeUInt32BE(60, 6); // TTL, seconds
  fixed.writeUInt16BE(rdata.length, 10);
  return Buffer.concat([fixed, rdata]);
}
