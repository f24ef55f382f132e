// The system's zlib (Linux: zlib1g-dev; Apple platforms: in the SDK), for gzip push bodies.
#include <zlib.h>
