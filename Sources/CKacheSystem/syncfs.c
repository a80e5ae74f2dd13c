#define _GNU_SOURCE
#include <unistd.h>
#include "CKacheSystem.h"

int kache_syncfs(int fd) {
#if defined(__linux__)
    return syncfs(fd);
#else
    (void)fd;
    sync();
    return 0;
#endif
}
