#include <stdlib.h> // defines __GLIBC__ on glibc
#include "CKacheSystem.h"
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void kache_return_freed_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
