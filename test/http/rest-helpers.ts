/**
 * Shared helpers of the REST tests: a fetch wrapper bound to one server and its tokens, and a
 * check for commands that other work adds later (tests that need them skip until they exist).
 */
import { RawClient } from '../helpers/resp-client.js';

export const TOKEN = 'test-standard-token';
export const RO_TOKEN = 'test-read-only-token';
export const TOKEN_ARGS = ['--token', TOKEN, '--read-only-token', RO_TOKEN];

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  bytes: Buffer;
  json: any;
}

export class Rest {
  constructor(readonly base: string, readonly token: string = TOKEN) {}

  async req(path: string, init: RequestInit & { noAuth?: boolean } = {}): Promise<Reply> {
    const headers = new Headers(init.headers);
    if (!init.noAuth && !headers.has('authorization')) headers.set('authorization', `Bearer ${this.token}`);
    const r = await fetch(this.base + path, { ...init, headers });
    const bytes = Buffer.from(await r.arrayBuffer());
    const text = bytes.toString('utf8');
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: r.status, headers: r.headers, text, bytes, json };
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Reply> {
    return this.req(path, { headers });
  }

  post(path: string, body: string | Buffer | Uint8Array, headers: Record<string, string> = {}): Promise<Reply> {
    return this.req(path, { method: 'POST', body: body as BodyInit, headers });
  }

  /** POST / with one command. */
  cmd(args: unknown[], headers: Record<string, string> = {}): Promise<Reply> {
    return this.post('/', JSON.stringify(args), headers);
  }

  pipeline(cmds: unknown[][], headers: Record<string, string> = {}): Promise<Reply> {
    return this.post('/pipeline', JSON.stringify(cmds), headers);
  }

  multi(cmds: unknown[][], headers: Record<string, string> = {}): Promise<Reply> {
    return this.post('/multi-exec', JSON.stringify(cmds), headers);
  }
}

/** Whether the server knows a command (COMMAND INFO over RESP). */
export async function hasCommand(port: number, name: string): Promise<boolean> {
  const c = await RawClient.connect(port);
  try {
    const r = await c.call('COMMAND', 'INFO', name);
    return !r.toString('latin1').startsWith('*1\r\n*-1');
  } finally {
    c.close();
  }
}
