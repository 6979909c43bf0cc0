/*
 * A libfiu failure point for file-backed mmap only: "tally/mm/mmap-file".
 *
 * libfiu's own posix/mm/mmap fails every mmap, and V8 maps its heap pages
 * with anonymous mmap: enabled inside node it ends the process ("FATAL
 * ERROR: ... Allocation failed - JavaScript heap out of memory") before any
 * SQLite call is reached. This point fails only mmap of a file descriptor
 * (SQLite maps its WAL index, the -shm file), with errno from failinfo
 * (ENOMEM when none), and is switched on and off with fiu-ctrl like every
 * other libfiu point. Loaded after libfiu's preload libraries
 * (tests/faults/helpers/tools.ts compiles it at test time).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/types.h>

int fiu_fail(const char *name);
void *fiu_failinfo(void);

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);

static void *fail_or_map(const char *sym, void *addr, size_t len, int prot, int flags, int fd, off_t off) {
  if (fd >= 0 && fiu_fail("tally/mm/mmap-file")) {
    void *info = fiu_failinfo();
    errno = info ? (int)(long)info : ENOMEM;
    return MAP_FAILED;
  }
  mmap_fn next = (mmap_fn)dlsym(RTLD_NEXT, sym);
  return next(addr, len, prot, flags, fd, off);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) { return fail_or_map("mmap", addr, len, prot, flags, fd, off); }
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) { return fail_or_map("mmap64", addr, len, prot, flags, fd, off); }
