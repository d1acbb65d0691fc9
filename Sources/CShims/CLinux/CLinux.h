// Thin shim over Linux calls that glibc declares only with _GNU_SOURCE, which Swift's Glibc
// module is built without. Nothing to link: the calls are in libc (glibc 2.28 and later).
//
// The prototype is written out instead of including <stdio.h> with _GNU_SOURCE: that would
// give this module its own copies of libc's types (struct stat, ...), which Swift then sees as
// members of CLinux in every file of the importing module.
#ifndef CASTPREP_CLINUX_H
#define CASTPREP_CLINUX_H

// renameat2(2), as glibc's <stdio.h> declares it; the values are the kernel's ABI.
extern int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
#define CASTPREP_AT_FDCWD (-100)
#define CASTPREP_RENAME_EXCHANGE (1U << 1)

/// Swaps the files at `from` and `to` in one atomic step (renameat2(2) with RENAME_EXCHANGE);
/// 0, or -1 with errno (ENOENT when `to` does not exist, EINVAL where the file system cannot).
static inline int castprep_exchange_files(const char *from, const char *to) {
    return renameat2(CASTPREP_AT_FDCWD, from, CASTPREP_AT_FDCWD, to, CASTPREP_RENAME_EXCHANGE);
}

#endif
