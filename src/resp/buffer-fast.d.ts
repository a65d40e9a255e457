// Node's fast Buffer codecs (defined on Buffer.prototype since Node 0.x, used by Node's own
// toString/write): they skip the encoding-name dispatch of toString()/write().
declare global {
  interface Buffer {
    latin1Slice(start: number, end: number): string;
    latin1Write(s: string, offset: number, length?: number): number;
    utf8Write(s: string, offset: number, length?: number): number;
  }
}
export {};
