import type { Script } from '../harness.js';

const scripts: Script[] = [
  { name: 'MULTI/EXEC runs queued commands in order', steps: [
    ['MULTI'], ['SET', 'a', '1'], ['GET', 'a'], ['EXEC'], ['GET', 'a'],
  ] },
  { name: 'queued arguments of every size keep their bytes (empty, 1, 32, 33, 1000; binary)', steps: [
    ['MULTI'], ['SET', '', ''], ['SET', 'k1', 'x'], ['SET', 'k'.repeat(16), 'v'.repeat(32)], ['SET', 'k'.repeat(33), 'w'.repeat(33)],
    ['HSET', 'h\x00\xff', 'f'.repeat(31), 'a\r\nb', 'g'.repeat(1000), 'z'.repeat(33)], ['RPUSH', 'l', ...Array.from({ length: 20 }, (_, i) => 'e'.repeat(i * 3))],
    ['EXEC'], ['GET', ''], ['GET', 'k1'], ['GET', 'k'.repeat(16)], ['GET', 'k'.repeat(33)], ['HMGET', 'h\x00\xff', 'f'.repeat(31), 'g'.repeat(1000), 'a\r\nb'], ['LRANGE', 'l', '0', '-1'],
  ] },
  { name: 'EXEC and DISCARD without MULTI', steps: [['EXEC'], ['DISCARD'], ['exec', 'x']] },
  { name: 'nested MULTI is an error that does not abort', steps: [
    ['MULTI'], ['MULTI'], ['SET', 'a', '1'], ['EXEC'],
  ] },
  { name: 'a queueing error aborts EXEC', steps: [
    ['MULTI'], ['SET', 'a', '1'], ['NOSUCHCMD', 'x'], ['GET'], ['EXEC'], ['GET', 'a'],
  ] },
  { name: 'runtime errors do not stop the transaction', steps: [
    ['SET', 's', 'x'], ['MULTI'], ['SET', 'b', '2'], ['SET', 'a', 'b', 'c'], ['GET', 'b'], ['EXEC'],
  ] },
  { name: 'DISCARD drops the queue', steps: [
    ['MULTI'], ['SET', 'a', '1'], ['DISCARD'], ['GET', 'a'], ['DISCARD'],
  ] },
  { name: 'WATCH inside MULTI', steps: [['MULTI'], ['WATCH', 'a'], ['EXEC']] },
  { name: 'WATCH with no key', steps: [['WATCH']] },
  { name: 'WATCH then a change from the same connection aborts EXEC', steps: [
    ['WATCH', 'w'], ['SET', 'w', '1'], ['MULTI'], ['GET', 'w'], ['EXEC'],
  ] },
  { name: 'UNWATCH clears a failed WATCH', steps: [
    ['WATCH', 'w'], ['SET', 'w', '1'], ['UNWATCH'], ['MULTI'], ['GET', 'w'], ['EXEC'],
  ] },
  { name: 'WATCH of an unchanged key lets EXEC run', steps: [
    ['SET', 'w', '1'], ['WATCH', 'w'], ['MULTI'], ['SET', 'w', '2'], ['EXEC'], ['GET', 'w'],
  ] },
  { name: 'FLUSHALL invalidates a WATCH on an existing key', steps: [
    ['SET', 'w', '1'], ['WATCH', 'w'], ['FLUSHALL'], ['MULTI'], ['PING'], ['EXEC'],
  ] },
  { name: 'FLUSHALL does not invalidate a WATCH on a missing key', steps: [
    ['WATCH', 'nokey'], ['FLUSHALL'], ['MULTI'], ['PING'], ['EXEC'],
  ] },
  { name: 'wrong arity inside MULTI aborts', steps: [['MULTI'], ['GET', 'a', 'b'], ['EXEC']] },
  { name: 'empty transaction', steps: [['MULTI'], ['EXEC']] },
];
export default scripts;
