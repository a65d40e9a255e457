/**
 * Wire protocol, compared byte for byte with redis-server: inline commands, pipelining, empty
 * multibulks, every protocol error (its reply, then the connection is closed: the next read
 * gives '<connection closed>' on both sides), unknown-command and arity texts, command-name case.
 */
import type { Script, Step } from '../harness.js';

const CLOSED = { raw: '', replies: 1 }; // read once more: both servers must have closed

/** A raw step that must produce `n` replies. */
const raw = (bytes: string | Buffer, replies = 1): Step => ({ raw: bytes, replies });

/** One script per protocol error: the reply, then the closed connection. */
function protocolError(name: string, bytes: string | Buffer, replies = 1, before: Step[] = []): Script {
  return { name: `protocol error: ${name}`, steps: [...before, raw(bytes, replies), CLOSED] };
}

const scripts: Script[] = [
  // ---------------------------------------------------------------- inline commands
  { name: 'inline commands with CRLF and LF line ends', steps: [
    raw('PING\r\n'), raw('PING\n'), raw('SET a hello\r\nGET a\r\n', 2), raw('ping "x y"\n'),
  ] },
  { name: 'inline commands: blank lines and extra spaces are skipped', steps: [
    raw('\r\n\n   \r\n  SET   k \t v  \r\nGET k\r\n', 2),
  ] },
  { name: 'inline commands: double quotes with escapes', steps: [
    raw('SET k "a b\\x41\\x4g\\n\\r\\t\\b\\a\\z\\\\\\""\r\nGET k\r\n', 2),
    raw('SET k "\\xff\\x00\\xFf"\r\nGET k\r\n', 2),
    raw('SET k "\\x"\r\nGET k\r\nSET k "\\x4"\r\nGET k\r\n', 4),
    raw('SET k ""\r\nGET k\r\n', 2),
  ] },
  { name: 'inline commands: single quotes and quotes inside a word', steps: [
    raw("SET k 'it\\'s \\n raw'\r\nGET k\r\n", 2),
    raw("SET k ''\r\nGET k\r\n", 2),
    raw('SET k a"b c"d\r\nGET k\r\n', 2),
    raw("SET k x'y z'\r\nGET k\r\n", 2),
    raw('SET "a"\t"b"\r\nGET a\r\n', 2),
  ] },
  { name: 'inline command arity and unknown command errors', steps: [
    raw('GET\r\n'), raw('NOSUCH a b\r\n'), raw('get a b c\r\n'),
  ] },
  { name: 'inline and multibulk commands mixed in one packet', steps: [
    raw('SET a 1\r\n*2\r\n$3\r\nGET\r\n$1\r\na\r\nPING\r\n*1\r\n$4\r\nPING\r\n', 4),
  ] },

  // ---------------------------------------------------------------- pipelining and empty requests
  { name: 'pipelined commands answer in order', steps: [
    raw('*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$2\r\n10\r\n*2\r\n$3\r\nGET\r\n$1\r\nx\r\n*2\r\n$3\r\nDEL\r\n$1\r\nx\r\n*2\r\n$3\r\nGET\r\n$1\r\nx\r\n', 4),
  ] },
  { name: 'a long pipeline in one packet', steps: [
    raw(Array.from({ length: 300 }, (_, i) => `*3\r\n$3\r\nSET\r\n$${String(i).length + 1}\r\nk${i}\r\n$1\r\nv\r\n`).join('') + '*1\r\n$6\r\nDBSIZE\r\n', 301),
  ] },
  { name: 'empty multibulk *0 and *-1 are ignored', steps: [
    raw('*0\r\n*-1\r\n*-5\r\nPING\r\n'), raw('*0\r\n', 0), raw('PING\r\n'), // *0 alone answers nothing
  ] },
  { name: 'a NUL byte before the end of an inline line: no reply until the 64 KB limit', steps: [
    raw('GET a\x00b\r\nPING\r\n', 0), raw('x'.repeat(64 * 1024)), CLOSED,
  ] },
  { name: 'the two bytes after a bulk are not checked', steps: [
    raw('*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n', 2),
  ] },
  { name: 'an empty command name is an unknown command', steps: [
    raw('*1\r\n$0\r\n\r\n'), raw('*2\r\n$0\r\n\r\n$1\r\nx\r\n'),
  ] },
  { name: 'binary-safe keys and values', steps: [
    ['SET', Buffer.from([0, 1, 2, 13, 10, 255]), Buffer.from([255, 0, 13, 10, 36, 42])],
    ['GET', Buffer.from([0, 1, 2, 13, 10, 255])],
  ] },
  { name: 'a value split over many bulk sizes', steps: [
    ['SET', 'k', 'x'.repeat(100000)], ['GET', 'k'], ['SET', 'k', ''], ['GET', 'k'],
  ] },

  // ---------------------------------------------------------------- protocol errors (each closes the connection)
  protocolError('invalid multibulk length (text)', '*abc\r\n'),
  protocolError('invalid multibulk length (above INT_MAX)', '*3000000000\r\n'),
  protocolError('invalid multibulk length (leading zero)', '*01\r\n'),
  protocolError('invalid multibulk length (plus sign)', '*+1\r\n'),
  protocolError('invalid multibulk length (empty)', '*\r\n'),
  protocolError('invalid bulk length (text)', '*1\r\n$abc\r\n'),
  protocolError('invalid bulk length (negative)', '*1\r\n$-1\r\n'),
  protocolError('invalid bulk length (leading zero)', '*1\r\n$04\r\nPING\r\n'),
  protocolError('invalid bulk length (above proto-max-bulk-len)', '*1\r\n$536870913\r\n'),
  protocolError("expected '$', got 'x'", '*1\r\nx3\r\n'),
  protocolError("expected '$', got ':'", '*2\r\n$3\r\nGET\r\n:1\r\n'),
  protocolError('expected $ got CR (mapped to a space)', '*1\r\n\r\r\n'),
  protocolError('unbalanced quotes (open double quote)', 'SET "a\r\n'),
  protocolError('unbalanced quotes (open single quote)', "SET 'a\r\n"),
  protocolError('unbalanced quotes (closing quote followed by a letter)', 'SET "a"b c\r\n'),
  protocolError('too big inline request', 'x'.repeat(64 * 1024 + 100)),
  protocolError('too big mbulk count string', '*' + '1'.repeat(64 * 1024 + 100)),
  protocolError('too big bulk count string', '*1\r\n$' + '1'.repeat(64 * 1024 + 100)),
  protocolError('after valid pipelined commands, which are answered first',
    '*3\r\n$3\r\nSET\r\n$1\r\np\r\n$1\r\n1\r\n*2\r\n$3\r\nGET\r\n$1\r\np\r\n*1\r\n$foo\r\n*1\r\n$4\r\nPING\r\n',
    3, [raw('PING\r\n')]),
  { name: 'protocol error: replies before the error arrive, commands after it do not', steps: [
    raw('SET q 1\r\nGET q\r\n*x\r\nSET q 2\r\n', 3), CLOSED,
  ] },
  { name: 'protocol error: inside MULTI still closes the connection', steps: [
    ['MULTI'], ['SET', 'm', '1'], raw('*1\r\n$x\r\n'), CLOSED,
  ] },

  // ---------------------------------------------------------------- unknown commands
  { name: 'unknown command without and with arguments', steps: [
    ['NOSUCHCMD'], ['nosuchcmd', 'a', 'b c', ''], ['FOO', "it's"],
  ] },
  { name: 'unknown command: a long name is cut at 128 characters', steps: [
    ['X'.repeat(200)], ['Y'.repeat(128)], ['Z'.repeat(127), 'a'],
  ] },
  { name: 'unknown command: long arguments are cut at 128 characters in total', steps: [
    ['NOPE', 'a'.repeat(200)],
    ['NOPE', 'a'.repeat(100), 'b'.repeat(100), 'c'.repeat(100)],
    ['NOPE', 'a'.repeat(126), 'b', 'c'],
    ['NOPE', 'a'.repeat(125), 'b', 'c'],
    ['NOPE', ...Array.from({ length: 100 }, (_, i) => `arg${i}`)],
  ] },
  { name: 'unknown command: binary arguments (CR/LF become spaces, NUL ends an argument)', steps: [
    ['NOPE', Buffer.from('a\r\nb')],
    ['NOPE', Buffer.from([0x61, 0x00, 0x62]), 'c'],
    [Buffer.from([0x6e, 0x00, 0x6f]), 'x'],
    ['NOPE', Buffer.from([0xff, 0xfe, 0x80])],
    [Buffer.from([0xc3, 0xa9, 0x0d, 0x0a])],
  ] },

  // ---------------------------------------------------------------- arity and case
  { name: 'wrong number of arguments texts use the lower-case name', steps: [
    ['GET'], ['get', 'a', 'b'], ['SET', 'a'], ['Del'], ['PING', 'a', 'b'], ['MULTI', 'x'], ['ECHO'],
  ] },
  { name: 'command names are case-insensitive', steps: [
    ['set', 'k', 'v'], ['GeT', 'k'], ['gEt', 'k'], ['PiNg'], ['pInG', 'hello'], ['dEl', 'k'], ['GET', 'k'],
  ] },
  { name: 'inline commands are case-insensitive too', steps: [
    raw('sEt k v\r\nGeT k\r\nPiNg\r\n', 3),
  ] },
];
export default scripts;
