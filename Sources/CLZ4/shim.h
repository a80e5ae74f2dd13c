// The system liblz4 (Debian: liblz4-dev); only the block API is used.
#include <lz4.h>
