#define _GNU_SOURCE
#include "CFileSync.h"

#if defined(__linux__)
#include <unistd.h>

int cfilesync_syncfs(int descriptor) {
    return syncfs(descriptor);
}
#endif
