/**
 * Client of an OpenAI-compatible embeddings endpoint (POST <url> {model, input: [...]} ->
 * {data: [{index, embedding}]}), used for hybrid search when search-embedding-url is set.
 */

export interface EmbedderOptions { url: string; model: string; key: string; timeoutMs?: number }

export class EmbeddingError extends Error {}

export class Embedder {
  constructor(private readonly opt: EmbedderOptions) {}

  get model(): string {
    return this.opt.model;
  }

  /** One vector per input text, in order. */
  async embed(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.opt.key !== '') headers.authorization = `Bearer ${this.opt.key}`;
    let res: Response;
    try {
      res = await fetch(this.opt.url, {
        method: 'POST', headers,
        body: JSON.stringify({ model: this.opt.model, input: texts.map((t) => (t === '' ? ' ' : t)) }),
        signal: AbortSignal.timeout(this.opt.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new EmbeddingError(`embedding endpoint ${this.opt.url} failed: ${(err as Error).message}`);
    }
    let body: { data?: { index?: number; embedding?: unknown }[] };
    try {
      body = await res.json() as typeof body;
    } catch {
      throw new EmbeddingError(`embedding endpoint ${this.opt.url} answered ${res.status} without JSON`);
    }
    if (!res.ok || !Array.isArray(body.data) || body.data.length !== texts.length) {
      throw new EmbeddingError(`embedding endpoint ${this.opt.url} answered ${res.status}: ${JSON.stringify(body).slice(0, 200)}`);
    }
    const out: number[][] = new Array(texts.length);
    body.data.forEach((d, i) => {
      const e = d.embedding;
      if (!Array.isArray(e) || e.some((x) => typeof x !== 'number')) throw new EmbeddingError(`embedding endpoint ${this.opt.url} sent a malformed embedding`);
      out[typeof d.index === 'number' ? d.index : i] = e as number[];
    });
    return out;
  }
}
