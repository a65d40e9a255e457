/**
 * Exact calls that crashed, stalled or blew up our server (found by the fuzzer or reported),
 * replayed on every run over TCP and REST (and through a script's redis.call where `eval`).
 * Each says what it did before its fix.
 */
export interface Regression {
  args: readonly string[];
  /** Also run as EVAL "return redis.call(unpack(ARGV))" 0 <args>. */
  eval?: boolean;
  was: string;
}

export const REGRESSIONS: readonly Regression[] = [
  { args: ['ZRANDMEMBER', 'z', '-9223372036854775808'], was: 'fatal "invalid size error" after a long stall (issue 16)' },
  { args: ['ZRANDMEMBER', 'z', '-9007199254740992'], eval: true, was: 'the same: an array of 2^53 picks' },
  { args: ['ZRANDMEMBER', 'Z', '-9223372036854775807', 'WITHSCORES'], was: 'passed the WITHSCORES range check only on the negative side' },
  { args: ['SRANDMEMBER', 'T', '-9007199254740993'], eval: true, was: 'EVAL: 4M Lua values, 10 s stall, 600 MB; TCP: up to 1 GB of output before the guard' },
  { args: ['HRANDFIELD', 'H', '-4611686018427387903', 'WITHVALUES'], eval: true, was: 'as SRANDMEMBER' },
];
