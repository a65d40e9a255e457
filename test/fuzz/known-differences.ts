/**
 * Rows whose error replies may differ from redis-server 7.0.15's under fuzzing, and why. The
 * fuzzer still calls them (crashes, hangs and memory count as always); their differing error
 * replies are reported, not failed. Each entry is a difference to fix or a deliberate choice.
 */
export const KNOWN_DIFFERENCES: Readonly<Record<string, string>> = {
  'script|debug': 'deliberate: the Lua debugger is not supported (a clear error instead of +OK)',
};
