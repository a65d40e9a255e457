/**
 * Persistence of JSON documents (the CollectionCodec of JsonDoc; see codec.ts).
 *
 * A document is always stored whole, as its compact JSON text (UTF-8) in the metadata
 * record: the serializer and parser are RedisJSON's (ds/json.ts), so integers stay integers
 * (bigints beyond 2^53 exactly), floats keep their float nature and shortest round-trip
 * digits (1.0 stays 1.0), and object key order is kept. Documents are not split into records:
 * a change rewrites the document (RedisJSON's own RDB format does the same).
 */
import { T } from '../engine/db.js';
import { JsonDoc, parseJson, serialize } from '../engine/ds/json.js';
import type { CollectionCodec } from './codec.js';

export const jsonCodec: CollectionCodec<JsonDoc> = {
  type: T.JSON,
  encodeWhole: (v) => Buffer.from(serialize(v.root), 'utf8'),
  size: () => 1,
  writeRecords() {
    throw new Error('JSON documents are stored whole');
  },
  decodeWhole: (b) => new JsonDoc(parseJson(b, Infinity)),
  loadBegin() {
    throw new Error('JSON documents are stored whole');
  },
};
