// syncfs-preload: gives syncfs(2) a meaning on powercutfs.
//
// Linux does not forward syncfs to a FUSE server (it sends FUSE_SYNCFS only to
// virtiofs), so on a FUSE mount syncfs returns 0 having told the server
// nothing: Kache's save() would promise a durability powercutfs never saw.
// Loaded with LD_PRELOAD into the crash harness, this syncfs first writes
// `sync` to the control file named by $POWERCUT_CONTROL, which makes
// everything on that mount durable (what syncfs does on a disk file system),
// then calls the real one.
//
// Built by scripts/lib/power-cut.sh with
//   cc -O2 -shared -fPIC -o syncfs-preload.so syncfs-preload.c -ldl

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int syncfs(int fd) {
    const char *control = getenv("POWERCUT_CONTROL");
    if (control) {
        int handle = open(control, O_WRONLY | O_CLOEXEC);
        if (handle < 0) return -1;
        ssize_t written = write(handle, "sync\n", 5);
        int code = errno;
        close(handle);
        if (written != 5) { errno = code; return -1; }
    }
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "syncfs");
    return real ? real(fd) : 0;
}
