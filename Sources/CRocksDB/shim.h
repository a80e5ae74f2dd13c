// RocksDB's C API (Debian: librocksdb-dev), for kache-bench's peer baseline.
// rocksdb/version.h is C++, so the version is read from the database's LOG.
#include <rocksdb/c.h>
