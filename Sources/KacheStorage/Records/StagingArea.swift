import Foundation

/// Where the write-behind queue keeps the encoded files it waits to write:
/// copied into 1 MiB blocks mapped for the purpose, each unmapped once the
/// last file in it is written.
///
/// Why not leave each file in the buffer it was encoded into: those buffers
/// come from malloc between the values a set keeps in memory, and in `async`
/// up to half the memory budget of them wait at once. Freed out of order by
/// the writer, they left holes of a few hundred bytes on nearly every page,
/// which no later `malloc_trim` could give back (W1 kept 45 MB more than
/// `sync` after `save()`; docs/MEMORY.md). A block is whole pages, returned
/// to the system the moment it is empty.
package final class StagingArea: Sendable {
    /// Files this long or longer keep their own buffer: malloc maps those
    /// itself (its threshold is 128 KiB or more), so they leave no holes.
    package static let largestStaged = 64 << 10
    static let blockLength = 1 << 20

    private struct Block: @unchecked Sendable {
        /// Owns the mapping: the files handed out are slices of it, and the
        /// last one released unmaps it. Written only through `base`, and only
        /// in bytes not yet handed out.
        let storage: Data
        let base: UnsafeMutableRawPointer
        var used = 0
    }

    private let current = Locked<Block?>(nil)

    package init() {}

    /// `file`'s bytes, in a block when it is small enough.
    package func stage(_ file: Data) -> Data {
        let length = file.count
        guard length > 0, length < Self.largestStaged else { return file }
        return current.withLock { block -> Data in
            if block.map({ $0.used + length > Self.blockLength }) ?? true {
                // Out of address space is the only failure: keep the file where it is.
                guard let fresh = Self.mapBlock() else { return file }
                block = fresh
            }
            let offset = block!.used
            file.withUnsafeBytes { block!.base.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: length) }
            block!.used += length
            return block!.storage[offset ..< offset + length]
        }
    }

    private static func mapBlock() -> Block? {
        let length = blockLength
        let address = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let address, address != MAP_FAILED else { return nil }
        let storage = Data(bytesNoCopy: address, count: length, deallocator: .custom { pointer, count in munmap(pointer, count) })
        return Block(storage: storage, base: address)
    }
}
