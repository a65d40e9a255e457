{
  "targets": [{
    "target_name": "nlua",
    "sources": ["nlua.c"],
    "include_dirs": ["/usr/include/lua5.1"],
    "libraries": ["-llua5.1"],
    "cflags": ["-O2"]
  }]
}
