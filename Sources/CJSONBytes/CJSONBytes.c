// The search is `static inline` in include/CJSONBytes.h; SwiftPM wants a C target to have a source file.
#include "CJSONBytes.h"
