import type { Script } from '../harness.js';

// Every script ends by deleting the users it created: FLUSHALL does not reset ACLs.
const cleanup = ['ACL', 'DELUSER', 'alice', 'bob', 'carol', 'dave'];

// Redis 7.0 lists several single-command rules of one user in hash order (random per process),
// so each user here gets at most one single-command rule besides categories.
const scripts: Script[] = [
  { name: 'default user description', steps: [['ACL', 'LIST'], ['ACL', 'USERS'], ['ACL', 'WHOAMI'], ['ACL', 'GETUSER', 'default']] },
  { name: 'SETUSER rules and their description', steps: [
    ['ACL', 'SETUSER', 'alice', 'on', '>pw', '~cache:*', '+@read', '-get', '&ch*'],
    ['ACL', 'GETUSER', 'alice'], ['ACL', 'LIST'],
    ['ACL', 'SETUSER', 'alice', '+get', '-@write', '+@read'], ['ACL', 'GETUSER', 'alice'],
    ['ACL', 'SETUSER', 'alice', '+set'], { cmd: ['ACL', 'GETUSER', 'alice'], compare: 'type' },
    ['ACL', 'SETUSER', 'bob'], ['ACL', 'LIST'],
    ['ACL', 'SETUSER', 'carol', 'allkeys', 'allcommands', 'allchannels', 'on', 'nopass'], ['ACL', 'GETUSER', 'carol'],
    ['ACL', 'SETUSER', 'dave', '+config|get', '%R~r:*', '%W~w:*', '%RW~rw:*', 'resetchannels'], ['ACL', 'GETUSER', 'dave'],
    ['ACL', 'SETUSER', 'dave', 'reset'], ['ACL', 'GETUSER', 'dave'], ['ACL', 'LIST'],
    cleanup,
  ] },
  { name: 'SETUSER errors change nothing', steps: [
    ['ACL', 'SETUSER', 'alice', 'on', '+@foo'], ['ACL', 'SETUSER', 'alice', 'foo'], ['ACL', 'SETUSER', 'alice', '+nocmd'],
    ['ACL', 'GETUSER', 'alice'], ['ACL', 'SETUSER', 'alice', '~*', '~x'], ['ACL', 'SETUSER', 'alice', '#abc'],
    ['ACL', 'SETUSER', 'alice', '<nopw'], ['ACL', 'SETUSER', 'alice', '%X~k'], ['ACL', 'LIST'],
    // Key and channel patterns: no white space or NUL; %R without ~ is the empty pattern.
    ['ACL', 'SETUSER', 'alice', '~a b'], ['ACL', 'SETUSER', 'alice', '&a\tb'], ['ACL', 'SETUSER', 'alice', '&a\0b'],
    ['ACL', 'SETUSER', 'alice', '%~x'], ['ACL', 'SETUSER', 'alice', '%R'], ['ACL', 'SETUSER', 'alice', '%RWR~x'],
    ['ACL', 'SETUSER', 'alice', '%R~k', '%W~k', '%RW~*', '~z'], ['ACL', 'GETUSER', 'alice'],
    // Selectors: merged arguments, unmatched parenthesis, rules a selector cannot take.
    ['ACL', 'SETUSER', 'bob', '(~a', '+get)', '(%R~b* &c +publish)'], ['ACL', 'GETUSER', 'bob'],
    ['ACL', 'SETUSER', 'bob', '(~a', '+get'], ['ACL', 'SETUSER', 'bob', '(on)'], ['ACL', 'SETUSER', 'bob', '()'],
    ['ACL', 'DRYRUN', 'bob', 'get', 'a'], ['ACL', 'DRYRUN', 'bob', 'get', 'b1'], ['ACL', 'DRYRUN', 'bob', 'publish', 'c', 'm'],
    ['ACL', 'DRYRUN', 'bob', 'publish', 'd', 'm'], ['ACL', 'DRYRUN', 'bob', 'set', 'a', 'v'],
    ['ACL', 'SETUSER', 'bob', 'clearselectors'], ['ACL', 'GETUSER', 'bob'], ['ACL', 'LIST'],
    ['ACL', 'DELUSER', 'default'], ['ACL', 'DELUSER', 'alice', 'nobody'], ['ACL', 'GETUSER', 'nobody'], cleanup,
  ] },
  { name: 'permissions are enforced: commands, keys, channels', steps: [
    ['ACL', 'SETUSER', 'alice', 'on', 'nopass', '+@string', '~k*', '%R~ro*', '+@pubsub', '&news.*'],
    ['AUTH', 'alice', 'x'], ['GET', 'k1'], ['GET', 'z'], ['SET', 'k1', 'v'], ['SET', 'ro1', 'v'], ['GET', 'ro1'],
    ['DEL', 'k1'], ['PUBLISH', 'news.a', 'm'], ['PUBLISH', 'sports', 'm'], ['ACL', 'WHOAMI'],
    ['AUTH', 'default', 'x'], ['ACL', 'WHOAMI'], cleanup,
  ] },
  { name: 'AUTH failures', steps: [
    ['AUTH', 'nobody', 'x'], ['AUTH', 'x'], ['AUTH', 'a', 'b', 'c'],
    ['ACL', 'SETUSER', 'bob', 'off', '>pw', '+@all'], ['AUTH', 'bob', 'pw'], ['ACL', 'SETUSER', 'bob', 'on'], ['AUTH', 'bob', 'bad'],
    ['AUTH', 'bob', 'pw'], ['ACL', 'WHOAMI'], cleanup,
  ] },
  { name: 'CAT, GENPASS, DRYRUN and errors', steps: [
    ['ACL', 'CAT'], { cmd: ['ACL', 'CAT', 'connection'], compare: 'type' }, ['ACL', 'CAT', 'nosuch'],
    { cmd: ['ACL', 'GENPASS'], compare: 'type' }, ['ACL', 'GENPASS', '0'], ['ACL', 'GENPASS', 'x'],
    ['ACL', 'SETUSER', 'alice', 'on', '+get', '~k*'], ['ACL', 'DRYRUN', 'alice', 'get', 'k'], ['ACL', 'DRYRUN', 'alice', 'set', 'k', 'v'],
    ['ACL', 'DRYRUN', 'alice', 'get', 'zz'], ['ACL', 'DRYRUN', 'nobody', 'get', 'k'], ['ACL', 'DRYRUN', 'alice', 'nocmd'],
    ['ACL', 'NOSUCH'], ['ACL'], ['ACL', 'LOAD'], ['ACL', 'HELP'], cleanup,
  ] },
];
export default scripts;
