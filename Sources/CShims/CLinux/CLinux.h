// Thin shim over Linux calls that glibc declares only with _GNU_SOURCE, which Swift's Glibc
// module is built without. Nothing to link: the calls are in libc (glibc 2.28 and later).
#ifndef CASTPREP_CLINUX_H
#define CASTPREP_CLINUX_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>

/// Swaps the files at `from` and `to` in one atomic step (renameat2(2) with RENAME_EXCHANGE);
/// 0, or -1 with errno (ENOENT when `to` does not exist, EINVAL where the file system cannot).
static inline int castprep_exchange_files(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE);
}

#endif
