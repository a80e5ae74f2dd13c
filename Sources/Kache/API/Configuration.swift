import Foundation
import KacheStorage
import Logging

/// How hard the blocks of a segment file compress their values: both are
/// LZ4, read by the same decoder at the same speed.
public enum BlockCompression: String, Sendable, CaseIterable, Codable {
    /// LZ4's fast encoder (the default): about 1 GB/s on one core.
    case fast
    /// LZ4's high-compression encoder at its fastest level: on W8's JSON
    /// values 12 % fewer bytes, and on W1's 17 %, at a fifth of the fast
    /// encoder's speed, which the background writer pays (W1's durable sets/s
    /// fell by a fifth; CHANGELOG.md, 0.3.0).
    case high
}

/// How much a `set` waits for the disk, and so what survives a crash or a
/// power cut (<doc:DurabilityModes>).
///
/// Figures taken in different modes can't be compared; `kache-bench` names the mode.
public enum Durability: String, Sendable, CaseIterable, Codable {
    /// No disk at all: a pure in-memory cache, bounded by the memory budget.
    case memory
    /// A `set` returns once its value is in memory; a background thread writes
    /// its record. ``Kache/Kache/save()-7rkg9`` makes everything durable. The default.
    case async
    /// A `set` returns after its record is written: appended to a segment
    /// file, or in a file of its own renamed into place. It survives the
    /// process being killed, not necessarily a power cut.
    case sync
    /// A `set` returns after its record, and the folder entry of a file of
    /// its own, are flushed to the device (it survives a power cut).
    case fsync
}

extension Kache {
    /// Settings of a cache instance. Every field has a sane default.
    ///
    /// ```swift
    /// var configuration = Kache.Configuration()
    /// configuration.memoryBudget = 32 << 20
    /// configuration.durability = .sync
    /// let cache = try Kache(directory: url, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The most bytes of values kept in memory (default 64 MiB), each value
        /// counted with its `Data` storage (96 bytes more past 14 bytes). Beyond
        /// it values leave memory by S3-FIFO (a value read only once leaves
        /// soon, one read again stays); their records stay on disk
        /// (<doc:BudgetsAndEviction>).
        public var memoryBudget: Int
        /// The time to live of `set(_:forKey:)` and of a Queue `push` without one (default 1 hour).
        public var defaultTTL: Duration
        /// The longest key, in UTF-8 bytes (default 1,024; at most 65,535).
        public var maximumKeyLength: Int
        /// The largest value, in bytes (default 64 MiB; at most 4 GiB − 1).
        public var maximumValueSize: Int
        /// How much a `set` waits for the disk (default `.async`).
        public var durability: Durability
        /// Values shorter than this many bytes are stored raw, without trying LZ4 (default 64).
        public var compressionThreshold: Int
        /// The most bytes the directory may occupy on disk, counted as the file
        /// system allocates them (whole blocks, as `du` reports); nil for no limit
        /// (the default; ``Kache/shared`` uses 1 GiB). A `set` that would go over
        /// it sweeps expired entries, then evicts entries of any key space by
        /// S3-FIFO (<doc:BudgetsAndEviction>).
        public var diskBudget: Int?
        /// Entries whose record (key, value and key-space name, plus 40 bytes
        /// of fields at most) is shorter than this many bytes are gathered with
        /// their neighbours into compressed blocks of a shared segment file;
        /// longer ones get a file of their own (default 16 KiB, at most
        /// ``largestSegmentThreshold``). 0 gives every entry a file of its own,
        /// as before segment files. A file of its own costs a whole block of
        /// the file system (4 KiB on ext4), an inode and a rename; a record in
        /// a segment costs its share of its compressed block.
        public var segmentThreshold: Int
        /// How the values in segment files' blocks are compressed (default
        /// `.fast`); a directory holds blocks of both kinds, whichever wrote them.
        public var blockCompression: BlockCompression
        /// The largest ``segmentThreshold``: a block of a segment file holds at most 1 MiB.
        public static let largestSegmentThreshold = 512 << 10
        /// A segment whose dead bytes (records replaced, removed, expired or
        /// evicted) pass this fraction of its length is compacted in the
        /// background: its live records are copied forward and the file is
        /// deleted (default 0.5).
        public var compactionThreshold: Double
        /// Capacity of ``Kache/defaultPool`` (default 1,000).
        public var defaultPoolCapacity: Int
        /// Capacity of ``Kache/defaultQueue`` (default 1,000).
        public var defaultQueueCapacity: Int
        /// The source of time for every expiry decision (default the system clock).
        public var clock: any WallClock
        /// Where damaged files, failed background writes and other events are reported
        /// (default a `Logger` labelled "kache", through swift-log).
        public var logger: Logger

        /// Creates a configuration; every argument has a default.
        public init(
            memoryBudget: Int = 64 << 20,
            defaultTTL: Duration = .seconds(3600),
            maximumKeyLength: Int = 1024,
            maximumValueSize: Int = 64 << 20,
            durability: Durability = .async,
            compressionThreshold: Int = 64,
            diskBudget: Int? = nil,
            segmentThreshold: Int = 16 << 10,
            blockCompression: BlockCompression = .fast,
            compactionThreshold: Double = 0.5,
            defaultPoolCapacity: Int = 1000,
            defaultQueueCapacity: Int = 1000,
            clock: any WallClock = SystemClock(),
            logger: Logger = Logger(label: "kache")
        ) {
            self.memoryBudget = memoryBudget
            self.defaultTTL = defaultTTL
            self.maximumKeyLength = maximumKeyLength
            self.maximumValueSize = maximumValueSize
            self.durability = durability
            self.compressionThreshold = compressionThreshold
            self.diskBudget = diskBudget
            self.segmentThreshold = segmentThreshold
            self.blockCompression = blockCompression
            self.compactionThreshold = compactionThreshold
            self.defaultPoolCapacity = defaultPoolCapacity
            self.defaultQueueCapacity = defaultQueueCapacity
            self.clock = clock
            self.logger = logger
        }

        func validated() throws(KacheError) -> Configuration {
            guard memoryBudget >= 0 else { throw .invalidConfiguration("memoryBudget must not be negative (it is \(memoryBudget))") }
            guard defaultTTL > .zero else { throw .invalidConfiguration("defaultTTL must be positive (it is \(defaultTTL))") }
            guard (1 ... Int(UInt16.max)).contains(maximumKeyLength) else {
                throw .invalidConfiguration("maximumKeyLength must be between 1 and 65,535 bytes (it is \(maximumKeyLength))")
            }
            guard (0 ... EntryFile.maximumPayload).contains(maximumValueSize) else {
                throw .invalidConfiguration("maximumValueSize must be between 0 and \(EntryFile.maximumPayload) bytes (it is \(maximumValueSize))")
            }
            if let diskBudget, diskBudget <= 0 { throw .invalidConfiguration("diskBudget must be positive or nil (it is \(diskBudget))") }
            guard (0 ... Configuration.largestSegmentThreshold).contains(segmentThreshold) else {
                throw .invalidConfiguration("segmentThreshold must be between 0 and \(Configuration.largestSegmentThreshold) bytes (it is \(segmentThreshold))")
            }
            guard compactionThreshold > 0, compactionThreshold <= 1 else {
                throw .invalidConfiguration("compactionThreshold must be in (0, 1] (it is \(compactionThreshold))")
            }
            guard compressionThreshold >= 0 else { throw .invalidConfiguration("compressionThreshold must not be negative") }
            guard defaultPoolCapacity > 0, defaultQueueCapacity > 0 else {
                throw .invalidConfiguration("default Pool and Queue capacities must be positive")
            }
            return self
        }
    }
}
