import KacheStorage

/// The sequences a manifest lists as settled (docs/FORMAT.md, Manifest), as
/// runs of consecutive sequences, and their two layouts: runs (version 5)
/// and one varint a sequence (version 4, read only).
///
/// Why runs: a checkpoint's settled entries are mostly whole stretches of
/// writes (W8 sets a million keys once: one run), so version 4's byte an
/// entry became a few bytes a run.
///
/// ```
/// runCount varint
/// per run: gap varint · length − 1 varint
///   gap: for the first run, its first sequence; after it, the sequences
///   missing between the previous run and this one, less one
/// ```
///
/// A run is never empty and two runs never touch or overlap: the layout can
/// say neither, so a sequence is listed once and every list has one encoding.
struct SettledSequences: Sendable, Equatable {
    /// Ascending, each separated from the next by at least one missing sequence.
    private(set) var runs: [ClosedRange<UInt64>] = []

    init() {}

    /// - Parameter ascending: sequences in ascending order; one listed twice counts once.
    init(ascending: some Sequence<UInt64>) {
        for sequence in ascending { append(sequence ... sequence) }
    }

    var isEmpty: Bool { runs.isEmpty }

    /// Adds `run`, which starts at or after the last run's start: joined to
    /// the last run when they touch or overlap.
    private mutating func append(_ run: ClosedRange<UInt64>) {
        guard let last = runs.last, last.upperBound == .max || run.lowerBound <= last.upperBound + 1 else {
            runs.append(run)
            return
        }
        runs[runs.count - 1] = last.lowerBound ... max(last.upperBound, run.upperBound)
    }

    // MARK: - Encoding

    /// The runs as version 5 stores them.
    /// - Complexity: O(runs)
    func encoded() -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(runs.count * 2 + 1)
        body.appendVarint(UInt64(runs.count))
        var previous: UInt64?
        for run in runs {
            body.appendVarint(previous.map { run.lowerBound - $0 - 2 } ?? run.lowerBound)
            body.appendVarint(run.upperBound - run.lowerBound)
            previous = run.upperBound
        }
        return body
    }

    /// The settled sequences as version 5 stores them.
    /// - Parameter sequences: every settled sequence, in any order, each
    ///   once. Sorted here, in place, only when they are spread too thin for
    ///   a bitmap (a sorted copy of a million took 8 MB more of `save()`'s peak).
    /// - Complexity: O(n + span / 64) when the bitmap of their span is at
    ///   most an eighth of their array; O(n log n) otherwise.
    ///
    /// Why a bitmap: a save lists the sequences shard by shard, in no order,
    /// and sorting W8's million took 0.14 s of its `save()`. Their span is
    /// mostly about their count (sequences are handed out one by one).
    static func encoded(inAnyOrder sequences: inout [UInt64]) -> [UInt8] {
        guard let least = sequences.min(), let most = sequences.max() else { return SettledSequences().encoded() }
        guard (most - least) / 64 < UInt64(sequences.count / 8) else {
            sequences.sort()
            return SettledSequences(ascending: sequences).encoded()
        }
        var words = [UInt64](repeating: 0, count: Int((most - least) / 64) + 1)
        for sequence in sequences {
            let offset = sequence - least
            words[Int(offset / 64)] |= 1 << (offset % 64)
        }
        var settled = SettledSequences()
        // The first sequence of the run not closed yet.
        var open: UInt64?
        for (index, word) in words.enumerated() {
            let base = least + UInt64(index) * 64
            var bit = 0
            // Look for the next set bit while no run is open, else for the next clear one.
            while bit < 64 {
                let rest = (open == nil ? word : ~word) >> UInt64(bit)
                guard rest != 0 else { break }
                bit += rest.trailingZeroBitCount
                if let start = open {
                    settled.runs.append(start ... base + UInt64(bit) - 1)
                    open = nil
                } else {
                    open = base + UInt64(bit)
                }
            }
        }
        if let start = open { settled.runs.append(start ... most) }
        return settled.encoded()
    }

    /// The length of an empty list's encoding (a run count of 0).
    static let emptyLength = 1

    // MARK: - Decoding

    /// Reads version 5's runs. Never traps and allocates only for runs the
    /// bytes left can hold (each takes two bytes at least).
    init(decodingRuns reader: inout BinaryReader) throws(Manifest.Damage) {
        do {
            let count = try reader.readVarint()
            guard count <= UInt64(reader.remaining / 2) else { throw Manifest.Damage.malformed }
            runs.reserveCapacity(Int(count))
            // The least sequence the next run may start at; nil once the last run reached the end.
            var next: UInt64? = 0
            for _ in 0 ..< count {
                let gap = try reader.readVarint()
                let extra = try reader.readVarint()
                guard let least = next, gap <= .max - least, extra <= .max - (least + gap) else { throw Manifest.Damage.malformed }
                let run = least + gap ... least + gap + extra
                runs.append(run)
                next = run.upperBound < .max - 1 ? run.upperBound + 2 : nil
            }
        } catch let damage as Manifest.Damage {
            throw damage
        } catch {
            throw .malformed
        }
    }

    /// Reads version 4's list: a count (u32), then each sequence less the
    /// one before as a varint (the first less 0), ascending without repeats.
    init(decodingSteps reader: inout BinaryReader) throws(Manifest.Damage) {
        do {
            let count = Int(try reader.read(UInt32.self))
            // A varint takes a byte at least.
            guard count <= reader.remaining else { throw Manifest.Damage.malformed }
            var sequence: UInt64 = 0
            for number in 0 ..< count {
                let step = try reader.readVarint()
                guard number == 0 || step > 0, step <= .max - sequence else { throw Manifest.Damage.malformed }
                sequence += step
                append(sequence ... sequence)
            }
        } catch let damage as Manifest.Damage {
            throw damage
        } catch {
            throw .malformed
        }
    }
}
