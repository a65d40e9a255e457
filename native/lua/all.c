/*
 * Lua's core and the libraries this build uses in one translation unit (as Lua's own
 * etc/all.c): with luaall_c defined, Lua's internal functions are static, so the compiler
 * can inline across what were separate files.
 */
#define luaall_c

/* The C headers first: ldebug.h's getline macro would clash with stdio.h's declaration. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lapi.c"
#include "lcode.c"
#include "ldebug.c"
#include "ldo.c"
#include "ldump.c"
#include "lfunc.c"
#include "lgc.c"
#include "llex.c"
#include "lmem.c"
#include "lobject.c"
#include "lopcodes.c"
#include "lparser.c"
#include "lstate.c"
#include "lstring.c"
#include "ltable.c"
#include "ltm.c"
#include "lundump.c"
#include "lvm.c"
#include "lzio.c"

#include "lauxlib.c"
#include "lbaselib.c"
#include "ldblib.c"
#include "lmathlib.c"
#include "lstrlib.c"
#include "ltablib.c"
