#define _GNU_SOURCE
#include "CFileSync.h"

#include <unistd.h>

int cfilesync_file_system(int descriptor) {
#if defined(__linux__)
    return syncfs(descriptor);
#else
    return fsync(descriptor);
#endif
}
