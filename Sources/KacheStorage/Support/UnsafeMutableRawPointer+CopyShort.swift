extension UnsafeMutableRawPointer {
    /// Copies `count` bytes from `source` here, in a few loads and stores
    /// when they are 16 or fewer (a key, mostly): an open copies each of a
    /// million keys in two parts (its prefix and its suffix) and once more
    /// into its string, and a call to `memmove` for each cost more than the
    /// copy itself. Longer runs go to `memmove`. Both ranges are read whole
    /// before any byte is written, so they may overlap.
    ///
    /// Public and inlinable for the reason `BinaryReader` is.
    @inlinable @inline(__always)
    public func copyShort(from source: UnsafeRawPointer, count: Int) {
        switch count {
        case 8 ... 16:
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            storeBytes(of: head, as: UInt64.self)
            storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
        case 4 ..< 8:
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            storeBytes(of: head, as: UInt32.self)
            storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
        case 1 ..< 4:
            let first = source.load(as: UInt8.self)
            let middle = source.load(fromByteOffset: count / 2, as: UInt8.self)
            let last = source.load(fromByteOffset: count - 1, as: UInt8.self)
            storeBytes(of: first, as: UInt8.self)
            storeBytes(of: middle, toByteOffset: count / 2, as: UInt8.self)
            storeBytes(of: last, toByteOffset: count - 1, as: UInt8.self)
        case 0:
            return
        default:
            copyMemory(from: source, byteCount: count)
        }
    }
}
