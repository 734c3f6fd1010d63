#define _GNU_SOURCE
#include "CShims.h"

#if defined(__linux__)
#include <malloc.h>
#include <unistd.h>

int cshims_syncfs(int descriptor) {
    return syncfs(descriptor);
}

int cshims_mallopt(int option, int value) {
    return mallopt(option, value);
}
#endif
