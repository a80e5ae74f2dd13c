// powercutfs: a FUSE file system that can lose power.
//
//   powercutfs STATE MOUNTPOINT
//
// It passes every call through to STATE/visible, and remembers, beside it,
// what a disk would still hold if the power went now (the durable state):
//
// - A file's content is durable as of its last fsync or fdatasync. Before a
//   write or a truncation changes a page (4 KiB) that was durable, the page's
//   durable bytes are kept in memory; the pages written since are its dirty
//   pages.
// - A folder's entries (create, mkdir, rename, unlink, rmdir, symlink) are
//   durable once the folder itself is fsynced, not before: the POSIX rule, and
//   stricter than ext4, whose journal often carries a new name to the disk with
//   the file's own fsync. A file's fsync never makes its name durable.
// - Modes, owners and times are durable at once (not modelled).
// - `sync` on the control file makes everything durable (what syncfs(2) does;
//   the kernel does not forward syncfs to a FUSE server, see
//   Tests/PowerCut/syncfs-preload.c).
//
// Unlinked files and removed folders are moved to STATE/graveyard rather than
// deleted, so their inode numbers (which name files in the durable state) are
// never reused and their bytes can come back in a cut.
//
// The control file MOUNTPOINT/.powercut (not listed, root only) takes one
// command per write:
//
//   sync          everything becomes durable.
//   cut [SEED]    the power goes: STATE/visible is rebuilt to hold exactly the
//                 durable state, and the file system unmounts and exits. With
//                 SEED, each file also keeps a random prefix (in offset order)
//                 of its dirty pages, drawn from SEED: a torn tail; without, no
//                 unsynced byte survives. Mount again to see what is left.
//   cut all       the same, but every unsynced page reaches the disk: only
//                 folder entries not flushed are lost.
//   unmount       a clean shutdown: unmounts and exits, STATE/visible as it is.
//
// The write returns once the command is done (for `cut`, once the rebuild is
// on the backing disk). Runs single-threaded (-s): one call at a time, so the
// bookkeeping needs no lock. Locks (flock, fcntl) are left to the kernel,
// which keeps them locally for the mount.
//
// Built by scripts/lib/power-cut.sh with
//   cc -O2 -o powercutfs powercutfs.c $(pkg-config --cflags --libs fuse3)

#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <fuse.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define PAGE 4096
#define CONTROL "/.powercut"
#define CONTROL_HANDLE UINT64_MAX
#define BUCKETS 4096

static char state_dir[PATH_MAX];
static char visible_dir[PATH_MAX];
static char graveyard_dir[PATH_MAX];

// MARK: - What is durable

// A byte set, one bit per page.
struct pages {
    uint8_t *bits;
    size_t count;  // pages the bits cover
};

static int pages_has(const struct pages *set, uint64_t page) {
    return page < set->count && (set->bits[page / 8] >> (page % 8)) & 1;
}

static void pages_add(struct pages *set, uint64_t page) {
    if (page >= set->count) {
        size_t count = set->count ? set->count : 64;
        while (count <= page) count *= 2;
        set->bits = realloc(set->bits, count / 8);
        memset(set->bits + set->count / 8, 0, (count - set->count) / 8);
        set->count = count;
    }
    set->bits[page / 8] |= (uint8_t)(1 << (page % 8));
}

// The durable bytes of one page that a write or truncation replaced.
struct saved_page {
    uint64_t page;
    size_t length;
    uint8_t *bytes;
};

// A file changed since its last fsync (none for a file that was not).
struct file_record {
    ino_t ino;
    off_t durable_size;
    struct pages dirty;       // written since the fsync
    struct pages saved;       // their durable bytes kept in `originals`
    struct saved_page *originals;
    size_t original_count;
    struct file_record *next;
};

// A folder changed since its last fsync: its durable entries.
struct folder_entry {
    char *name;
    ino_t ino;
};

struct folder_record {
    ino_t ino;
    struct folder_entry *entries;
    size_t count;
    struct folder_record *next;
};

static struct file_record *files[BUCKETS];
static struct folder_record *folders[BUCKETS];

static struct file_record *file_record(ino_t ino, int create, int fd) {
    struct file_record **slot = &files[ino % BUCKETS];
    for (struct file_record *record = *slot; record; record = record->next)
        if (record->ino == ino) return record;
    if (!create) return NULL;
    struct stat info;
    if (fstat(fd, &info) != 0) return NULL;
    struct file_record *record = calloc(1, sizeof *record);
    record->ino = ino;
    record->durable_size = info.st_size;
    record->next = *slot;
    *slot = record;
    return record;
}

static void free_file_record(struct file_record *record) {
    for (size_t i = 0; i < record->original_count; i++) free(record->originals[i].bytes);
    free(record->originals);
    free(record->dirty.bits);
    free(record->saved.bits);
    free(record);
}

// The file's content becomes durable (fsync).
static void forget_file(ino_t ino) {
    for (struct file_record **slot = &files[ino % BUCKETS]; *slot; slot = &(*slot)->next) {
        if ((*slot)->ino == ino) {
            struct file_record *record = *slot;
            *slot = record->next;
            free_file_record(record);
            return;
        }
    }
}

// Keeps the durable bytes of `page` before they change, once.
static void save_page(struct file_record *record, int fd, uint64_t page) {
    off_t start = (off_t)page * PAGE;
    if (start >= record->durable_size || pages_has(&record->saved, page)) return;
    size_t length = (size_t)(record->durable_size - start < PAGE ? record->durable_size - start : PAGE);
    uint8_t *bytes = calloc(1, PAGE);
    ssize_t got = pread(fd, bytes, length, start);
    (void)got;  // bytes past the current end were cut by a truncation saved before: zeros
    record->originals = realloc(record->originals, (record->original_count + 1) * sizeof *record->originals);
    record->originals[record->original_count++] = (struct saved_page){page, length, bytes};
    pages_add(&record->saved, page);
}

static struct file_record *before_change(int fd) {
    struct stat info;
    if (fstat(fd, &info) != 0) return NULL;
    return file_record(info.st_ino, 1, fd);
}

static void before_write(int fd, off_t offset, size_t size) {
    struct file_record *record = before_change(fd);
    if (!record || size == 0) return;
    for (uint64_t page = (uint64_t)offset / PAGE; page <= (uint64_t)(offset + (off_t)size - 1) / PAGE; page++) {
        save_page(record, fd, page);
        pages_add(&record->dirty, page);
    }
}

static void before_truncate(int fd, off_t size) {
    struct file_record *record = before_change(fd);
    if (!record) return;
    struct stat info;
    fstat(fd, &info);
    for (uint64_t page = (uint64_t)size / PAGE; (off_t)page * PAGE < info.st_size; page++) save_page(record, fd, page);
}

static struct folder_record *folder_record(ino_t ino) {
    for (struct folder_record *record = folders[ino % BUCKETS]; record; record = record->next)
        if (record->ino == ino) return record;
    return NULL;
}

static void free_folder_record(struct folder_record *record) {
    for (size_t i = 0; i < record->count; i++) free(record->entries[i].name);
    free(record->entries);
    free(record);
}

// Lists a folder's entries as they are now.
static struct folder_record *list_folder(const char *path, ino_t ino) {
    DIR *dir = opendir(path);
    if (!dir) return NULL;
    struct folder_record *record = calloc(1, sizeof *record);
    record->ino = ino;
    size_t capacity = 0;
    for (struct dirent *entry; (entry = readdir(dir));) {
        if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
        if (record->count == capacity) {
            capacity = capacity ? capacity * 2 : 16;
            record->entries = realloc(record->entries, capacity * sizeof *record->entries);
        }
        record->entries[record->count++] = (struct folder_entry){strdup(entry->d_name), entry->d_ino};
    }
    closedir(dir);
    return record;
}

// Keeps a folder's durable entries before its first change since its fsync.
static void before_folder_change(const char *path) {
    struct stat info;
    if (lstat(path, &info) != 0 || folder_record(info.st_ino)) return;
    struct folder_record *record = list_folder(path, info.st_ino);
    if (!record) return;
    record->next = folders[info.st_ino % BUCKETS];
    folders[info.st_ino % BUCKETS] = record;
}

static void before_parent_change(const char *path) {
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    if (slash) *slash = 0;
    before_folder_change(parent);
}

// The folder's entries become durable (fsync of the folder).
static void forget_folder(ino_t ino) {
    for (struct folder_record **slot = &folders[ino % BUCKETS]; *slot; slot = &(*slot)->next) {
        if ((*slot)->ino == ino) {
            struct folder_record *record = *slot;
            *slot = record->next;
            free_folder_record(record);
            return;
        }
    }
}

static int remove_one(const char *path, const struct stat *info, int flag, struct FTW *walk) {
    (void)info; (void)flag; (void)walk;
    remove(path);
    return 0;
}

static void remove_tree(const char *path) {
    nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS);
}

static void empty_graveyard(void) {
    remove_tree(graveyard_dir);
    mkdir(graveyard_dir, 0700);
}

// Everything becomes durable.
static void sync_everything(void) {
    for (int bucket = 0; bucket < BUCKETS; bucket++) {
        while (files[bucket]) {
            struct file_record *record = files[bucket];
            files[bucket] = record->next;
            free_file_record(record);
        }
        while (folders[bucket]) {
            struct folder_record *record = folders[bucket];
            folders[bucket] = record->next;
            free_folder_record(record);
        }
    }
    empty_graveyard();
}

// MARK: - The cut

// Where each inode is now: in the visible tree or the graveyard.
struct location {
    ino_t ino;
    char *path;
    struct location *next;
};

static struct location *locations[BUCKETS];

static int note_location(const char *path, const struct stat *info, int flag, struct FTW *walk) {
    (void)flag; (void)walk;
    struct location *location = malloc(sizeof *location);
    *location = (struct location){info->st_ino, strdup(path), locations[info->st_ino % BUCKETS]};
    locations[info->st_ino % BUCKETS] = location;
    return 0;
}

static const char *location_of(ino_t ino) {
    for (struct location *location = locations[ino % BUCKETS]; location; location = location->next)
        if (location->ino == ino) return location->path;
    return NULL;
}

static void forget_locations(void) {
    for (int bucket = 0; bucket < BUCKETS; bucket++) {
        while (locations[bucket]) {
            struct location *location = locations[bucket];
            locations[bucket] = location->next;
            free(location->path);
            free(location);
        }
    }
}

static uint64_t random_state;

static uint64_t next_random(void) {
    uint64_t z = (random_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int copy_range(int from, int to, off_t start, off_t end) {
    uint8_t buffer[65536];
    for (off_t offset = start; offset < end;) {
        size_t want = (size_t)(end - offset < (off_t)sizeof buffer ? end - offset : (off_t)sizeof buffer);
        ssize_t got = pread(from, buffer, want, offset);
        if (got <= 0) break;
        if (pwrite(to, buffer, (size_t)got, offset) != got) return -1;
        offset += got;
    }
    return 0;
}

// Writes the durable content of the file at `source` to `target`.
static int copy_durable_file(const char *source, const char *target, int torn) {
    int from = open(source, O_RDONLY | O_NOFOLLOW);
    if (from < 0) return -1;
    struct stat info;
    fstat(from, &info);
    int to = open(target, O_WRONLY | O_CREAT | O_EXCL, info.st_mode & 07777);
    if (to < 0) { close(from); return -1; }
    struct file_record *record = file_record(info.st_ino, 0, -1);
    if (!record) {
        copy_range(from, to, 0, info.st_size);
        close(from);
        close(to);
        return 0;
    }
    // The dirty pages that reach the disk anyway: a prefix, in offset order.
    uint64_t dirty = 0;
    for (uint64_t page = 0; page < record->dirty.count; page++) dirty += pages_has(&record->dirty, page);
    uint64_t kept = torn == 2 ? dirty : torn ? next_random() % (dirty + 1) : 0;
    struct pages arrived = {0};
    int64_t last_arrived = -1;
    for (uint64_t page = 0, seen = 0; page < record->dirty.count && seen < kept; page++) {
        if (!pages_has(&record->dirty, page)) continue;
        pages_add(&arrived, page);
        last_arrived = (int64_t)page;
        seen++;
    }
    copy_range(from, to, 0, record->durable_size < info.st_size ? record->durable_size : info.st_size);
    for (size_t i = 0; i < record->original_count; i++) {
        struct saved_page *original = &record->originals[i];
        if (!pages_has(&arrived, original->page))
            pwrite(to, original->bytes, original->length, (off_t)original->page * PAGE);
    }
    for (uint64_t page = 0; page < arrived.count; page++) {
        if (!pages_has(&arrived, page)) continue;
        off_t start = (off_t)page * PAGE, end = start + PAGE < info.st_size ? start + PAGE : info.st_size;
        copy_range(from, to, start, end);
    }
    off_t size = record->durable_size;
    if (last_arrived >= 0) {
        off_t end = ((off_t)last_arrived + 1) * PAGE < info.st_size ? ((off_t)last_arrived + 1) * PAGE : info.st_size;
        if (end > size) size = end;
    }
    int result = ftruncate(to, size);
    free(arrived.bits);
    close(from);
    close(to);
    return result;
}

// Rebuilds the folder `ino` as it is durable, at `target`.
static void rebuild_folder(ino_t ino, const char *target, int torn) {
    struct folder_record *record = folder_record(ino);
    struct folder_record *listed = NULL;
    if (!record) {
        const char *source = location_of(ino);
        if (!source || !(listed = list_folder(source, ino))) return;
        record = listed;
    }
    for (size_t i = 0; i < record->count; i++) {
        const char *source = location_of(record->entries[i].ino);
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", target, record->entries[i].name);
        struct stat info;
        if (!source || lstat(source, &info) != 0) {
            fprintf(stderr, "powercutfs: %s (inode %lu) is nowhere to be found\n", path, (unsigned long)record->entries[i].ino);
            continue;
        }
        if (S_ISDIR(info.st_mode)) {
            mkdir(path, info.st_mode & 07777);
            rebuild_folder(info.st_ino, path, torn);
        } else if (S_ISLNK(info.st_mode)) {
            char link[PATH_MAX];
            ssize_t length = readlink(source, link, sizeof link - 1);
            if (length >= 0) { link[length] = 0; symlink(link, path); }
        } else if (S_ISREG(info.st_mode)) {
            copy_durable_file(source, path, torn);
        }
    }
    if (listed) free_folder_record(listed);
}

// The power goes: STATE/visible is replaced by the durable state.
static int cut(int torn, uint64_t seed) {
    random_state = seed;
    char rebuilt[PATH_MAX], old[PATH_MAX];
    snprintf(rebuilt, sizeof rebuilt, "%s/cut", state_dir);
    snprintf(old, sizeof old, "%s/old", state_dir);
    remove_tree(rebuilt);
    remove_tree(old);
    nftw(visible_dir, note_location, 32, FTW_PHYS);
    nftw(graveyard_dir, note_location, 32, FTW_PHYS);
    struct stat root;
    if (stat(visible_dir, &root) != 0 || mkdir(rebuilt, root.st_mode & 07777) != 0) return -errno;
    rebuild_folder(root.st_ino, rebuilt, torn);
    forget_locations();
    if (rename(visible_dir, old) != 0 || rename(rebuilt, visible_dir) != 0) return -errno;
    remove_tree(old);
    sync_everything();
    return 0;
}

// MARK: - Pass-through

static void backing_path(char *out, const char *path) {
    snprintf(out, PATH_MAX, "%s%s", visible_dir, path);
}

static int is_control(const char *path) {
    return path && !strcmp(path, CONTROL);
}

static void *pc_init(struct fuse_conn_info *connection, struct fuse_config *config) {
    (void)connection;
    config->use_ino = 1;
    config->nullpath_ok = 1;
    config->hard_remove = 1;   // our unlink keeps the inode in the graveyard
    config->direct_io = 0;     // through the page cache, so mmap works
    config->kernel_cache = 0;
    return NULL;
}

static int pc_getattr(const char *path, struct stat *info, struct fuse_file_info *file) {
    if (is_control(path)) {
        memset(info, 0, sizeof *info);
        info->st_mode = S_IFREG | 0600;
        info->st_nlink = 1;
        return 0;
    }
    if (file && file->fh != CONTROL_HANDLE) return fstat((int)file->fh, info) == 0 ? 0 : -errno;
    char real[PATH_MAX];
    backing_path(real, path);
    return lstat(real, info) == 0 ? 0 : -errno;
}

static int pc_readlink(const char *path, char *buffer, size_t size) {
    char real[PATH_MAX];
    backing_path(real, path);
    ssize_t length = readlink(real, buffer, size - 1);
    if (length < 0) return -errno;
    buffer[length] = 0;
    return 0;
}

static int pc_mkdir(const char *path, mode_t mode) {
    char real[PATH_MAX];
    backing_path(real, path);
    before_parent_change(real);
    return mkdir(real, mode) == 0 ? 0 : -errno;
}

static int pc_symlink(const char *target, const char *path) {
    char real[PATH_MAX];
    backing_path(real, path);
    before_parent_change(real);
    return symlink(target, real) == 0 ? 0 : -errno;
}

// Moves the file or empty folder at `real` into the graveyard.
static int bury(const char *real) {
    struct stat info;
    if (lstat(real, &info) != 0) return -errno;
    char grave[PATH_MAX];
    snprintf(grave, sizeof grave, "%s/%lu", graveyard_dir, (unsigned long)info.st_ino);
    return rename(real, grave) == 0 ? 0 : -errno;
}

static int pc_unlink(const char *path) {
    char real[PATH_MAX];
    backing_path(real, path);
    struct stat info;
    if (lstat(real, &info) != 0) return -errno;
    if (S_ISDIR(info.st_mode)) return -EISDIR;
    before_parent_change(real);
    return bury(real);
}

static int is_empty_folder(const char *real) {
    struct folder_record *listing = list_folder(real, 0);
    if (!listing) return -errno;
    int empty = listing->count == 0;
    free_folder_record(listing);
    return empty ? 0 : -ENOTEMPTY;
}

static int pc_rmdir(const char *path) {
    char real[PATH_MAX];
    backing_path(real, path);
    struct stat info;
    if (lstat(real, &info) != 0) return -errno;
    if (!S_ISDIR(info.st_mode)) return -ENOTDIR;
    int empty = is_empty_folder(real);
    if (empty != 0) return empty;
    before_parent_change(real);
    return bury(real);
}

static int pc_rename(const char *from, const char *to, unsigned int flags) {
    if (flags & ~RENAME_NOREPLACE) return -EINVAL;
    char source[PATH_MAX], target[PATH_MAX];
    backing_path(source, from);
    backing_path(target, to);
    struct stat moved, replaced;
    if (lstat(source, &moved) != 0) return -errno;
    before_parent_change(source);
    before_parent_change(target);
    if (lstat(target, &replaced) == 0 && replaced.st_ino != moved.st_ino) {
        if (flags & RENAME_NOREPLACE) return -EEXIST;
        if (S_ISDIR(replaced.st_mode)) {
            if (!S_ISDIR(moved.st_mode)) return -EISDIR;
            int empty = is_empty_folder(target);
            if (empty != 0) return empty;
        } else if (S_ISDIR(moved.st_mode)) {
            return -ENOTDIR;
        }
        int buried = bury(target);
        if (buried != 0) return buried;
    }
    return rename(source, target) == 0 ? 0 : -errno;
}

static int pc_chmod(const char *path, mode_t mode, struct fuse_file_info *file) {
    if (file) return fchmod((int)file->fh, mode) == 0 ? 0 : -errno;
    char real[PATH_MAX];
    backing_path(real, path);
    return chmod(real, mode) == 0 ? 0 : -errno;
}

static int pc_chown(const char *path, uid_t user, gid_t group, struct fuse_file_info *file) {
    if (file) return fchown((int)file->fh, user, group) == 0 ? 0 : -errno;
    char real[PATH_MAX];
    backing_path(real, path);
    return lchown(real, user, group) == 0 ? 0 : -errno;
}

static int pc_truncate(const char *path, off_t size, struct fuse_file_info *file) {
    if (is_control(path)) return 0;
    int fd = file ? (int)file->fh : -1;
    if (!file) {
        char real[PATH_MAX];
        backing_path(real, path);
        if ((fd = open(real, O_WRONLY | O_NOFOLLOW)) < 0) return -errno;
    }
    before_truncate(fd, size);
    int result = ftruncate(fd, size) == 0 ? 0 : -errno;
    if (!file) close(fd);
    return result;
}

static int open_backing(const char *path, struct fuse_file_info *file, mode_t mode, int creating) {
    if (is_control(path)) {
        file->fh = CONTROL_HANDLE;
        file->direct_io = 1;
        return 0;
    }
    char real[PATH_MAX];
    backing_path(real, path);
    // The kernel gives every write its offset, O_APPEND included; O_TRUNC is
    // a change to remember first.
    // A write-only file is opened for reading too, to keep the durable bytes
    // a write replaces.
    int flags = file->flags & ~(O_APPEND | O_TRUNC);
    if ((flags & O_ACCMODE) == O_WRONLY) flags = (flags & ~O_ACCMODE) | O_RDWR;
    if (creating && access(real, F_OK) != 0) before_parent_change(real);
    int fd = open(real, flags, mode);
    if (fd < 0 && errno == EACCES && (file->flags & O_ACCMODE) == O_WRONLY)
        fd = open(real, file->flags & ~(O_APPEND | O_TRUNC), mode);
    if (fd < 0) return -errno;
    if ((file->flags & O_TRUNC) && (file->flags & O_ACCMODE) != O_RDONLY) {
        before_truncate(fd, 0);
        ftruncate(fd, 0);
    }
    file->fh = (uint64_t)fd;
    return 0;
}

static int pc_open(const char *path, struct fuse_file_info *file) {
    return open_backing(path, file, 0, 0);
}

static int pc_create(const char *path, mode_t mode, struct fuse_file_info *file) {
    return open_backing(path, file, mode, 1);
}

static int pc_read(const char *path, char *buffer, size_t size, off_t offset, struct fuse_file_info *file) {
    (void)path;
    if (file->fh == CONTROL_HANDLE) return 0;
    ssize_t got = pread((int)file->fh, buffer, size, offset);
    return got >= 0 ? (int)got : -errno;
}

static int control(const char *command, size_t size) {
    char text[64] = {0};
    memcpy(text, command, size < sizeof text - 1 ? size : sizeof text - 1);
    unsigned long long seed;
    if (!strncmp(text, "sync", 4)) {
        sync_everything();
        return (int)size;
    }
    if (!strncmp(text, "cut", 3)) {
        int torn = !strncmp(text, "cut all", 7) ? 2 : sscanf(text + 3, "%llu", &seed) == 1;
        int result = cut(torn, torn ? seed : 0);
        fuse_exit(fuse_get_context()->fuse);
        return result == 0 ? (int)size : result;
    }
    if (!strncmp(text, "unmount", 7)) {
        fuse_exit(fuse_get_context()->fuse);
        return (int)size;
    }
    return -EINVAL;
}

static int pc_write(const char *path, const char *buffer, size_t size, off_t offset, struct fuse_file_info *file) {
    (void)path;
    if (file->fh == CONTROL_HANDLE) return control(buffer, size);
    before_write((int)file->fh, offset, size);
    ssize_t written = pwrite((int)file->fh, buffer, size, offset);
    return written >= 0 ? (int)written : -errno;
}

static int pc_statfs(const char *path, struct statvfs *info) {
    (void)path;
    return statvfs(visible_dir, info) == 0 ? 0 : -errno;
}

static int pc_release(const char *path, struct fuse_file_info *file) {
    (void)path;
    if (file->fh != CONTROL_HANDLE) close((int)file->fh);
    return 0;
}

static int pc_fsync(const char *path, int datasync, struct fuse_file_info *file) {
    (void)path; (void)datasync;
    if (file->fh == CONTROL_HANDLE) return 0;
    struct stat info;
    if (fstat((int)file->fh, &info) != 0) return -errno;
    forget_file(info.st_ino);
    return 0;
}

static int pc_opendir(const char *path, struct fuse_file_info *file) {
    char real[PATH_MAX];
    backing_path(real, path);
    DIR *dir = opendir(real);
    if (!dir) return -errno;
    file->fh = (uint64_t)(uintptr_t)dir;
    return 0;
}

static int pc_readdir(const char *path, void *buffer, fuse_fill_dir_t fill, off_t offset,
                      struct fuse_file_info *file, enum fuse_readdir_flags flags) {
    (void)path; (void)offset; (void)flags;
    DIR *dir = (DIR *)(uintptr_t)file->fh;
    rewinddir(dir);
    for (struct dirent *entry; (entry = readdir(dir));) {
        struct stat info = {0};
        info.st_ino = entry->d_ino;
        info.st_mode = (mode_t)DTTOIF(entry->d_type);
        if (fill(buffer, entry->d_name, &info, 0, 0)) break;
    }
    return 0;
}

static int pc_releasedir(const char *path, struct fuse_file_info *file) {
    (void)path;
    closedir((DIR *)(uintptr_t)file->fh);
    return 0;
}

static int pc_fsyncdir(const char *path, int datasync, struct fuse_file_info *file) {
    (void)path; (void)datasync;
    struct stat info;
    if (fstat(dirfd((DIR *)(uintptr_t)file->fh), &info) != 0) return -errno;
    forget_folder(info.st_ino);
    return 0;
}

static int pc_utimens(const char *path, const struct timespec times[2], struct fuse_file_info *file) {
    if (file) return futimens((int)file->fh, times) == 0 ? 0 : -errno;
    char real[PATH_MAX];
    backing_path(real, path);
    return utimensat(AT_FDCWD, real, times, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

static const struct fuse_operations operations = {
    .init = pc_init,
    .getattr = pc_getattr,
    .readlink = pc_readlink,
    .mkdir = pc_mkdir,
    .symlink = pc_symlink,
    .unlink = pc_unlink,
    .rmdir = pc_rmdir,
    .rename = pc_rename,
    .chmod = pc_chmod,
    .chown = pc_chown,
    .truncate = pc_truncate,
    .open = pc_open,
    .create = pc_create,
    .read = pc_read,
    .write = pc_write,
    .statfs = pc_statfs,
    .release = pc_release,
    .fsync = pc_fsync,
    .opendir = pc_opendir,
    .readdir = pc_readdir,
    .releasedir = pc_releasedir,
    .fsyncdir = pc_fsyncdir,
    .utimens = pc_utimens,
};

int main(int argc, char *argv[]) {
    if (argc < 3) {
        fprintf(stderr, "usage: powercutfs STATE MOUNTPOINT [FUSE OPTIONS]\n");
        return 2;
    }
    if (!realpath(argv[1], state_dir)) {
        perror(argv[1]);
        return 2;
    }
    snprintf(visible_dir, sizeof visible_dir, "%s/visible", state_dir);
    snprintf(graveyard_dir, sizeof graveyard_dir, "%s/graveyard", state_dir);
    mkdir(visible_dir, 0700);
    empty_graveyard();
    // Foreground and single-threaded, with the caller's options after ours.
    char *arguments[argc + 4];
    int count = 0;
    arguments[count++] = argv[0];
    arguments[count++] = argv[2];
    arguments[count++] = "-f";
    arguments[count++] = "-s";
    arguments[count++] = "-ofsname=powercutfs,subtype=powercutfs";
    for (int i = 3; i < argc; i++) arguments[count++] = argv[i];
    arguments[count] = NULL;
    return fuse_main(count, arguments, &operations, NULL);
}
