/** Slots of the busy acceptor's shared Int32Array (busy-acceptor.ts, acceptor-worker.ts). */
/** 1 while the engine thread is busy in a script (the acceptor accepts), 0 otherwise. */
export const A_STATE = 0;
/** The acceptor's state as it last saw it: 0 once it has stopped accepting. */
export const A_ACK = 1;
/** Descriptors pushed by the acceptor / taken by the engine thread (counters). */
export const A_HEAD = 2;
export const A_TAIL = 3;
export const A_RING = 4;
export const A_RING_SIZE = 1024;
export const A_SIZE = A_RING + A_RING_SIZE;
