/**
 * Exact calls that crashed, hung or blew up our server (found by the fuzzer or reported),
 * replayed on every run over TCP and REST. Each line says what it did before its fix.
 */
export const REGRESSIONS: ReadonlyArray<readonly string[]> = [
  // Fatal "invalid size error" (an array of 2^63 picks) after a long stall.
  ['ZRANDMEMBER', 'z', '-9223372036854775808'],
];
