// The system SQLite (Debian: libsqlite3-dev), for kache-bench's peer baseline.
#include <sqlite3.h>
