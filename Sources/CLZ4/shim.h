// The system liblz4 (Debian: liblz4-dev); only the block API and its
// high-compression variant are used.
#include <lz4.h>
#include <lz4hc.h>
