/// Which sequences a manifest lists as settled, asked once per record a
/// restore finds. A bitmap over the range the runs span when it takes no
/// more memory than the runs themselves (many short runs close together,
/// as after overwrites: each question one load, where a binary search of a
/// large array costs a cache miss a step); else a binary search of the runs.
/// The bitmap is never larger than the runs the manifest's bytes held, so a
/// hostile manifest claiming a huge span can't make it large.
struct SettledVersions {
    private let runs: [ClosedRange<UInt64>]
    private let first: UInt64
    private let bits: [UInt64]

    init(_ settled: SettledSequences) {
        first = settled.runs.first?.lowerBound ?? 0
        guard let last = settled.runs.last?.upperBound, (last - first) / 64 + 1 <= UInt64(settled.runs.count) * 2 else {
            runs = settled.runs
            bits = []
            return
        }
        var bits = [UInt64](repeating: 0, count: Int((last - first) / 64) + 1)
        for run in settled.runs {
            for sequence in run {
                let bit = sequence - first
                bits[Int(bit / 64)] |= 1 << (bit % 64)
            }
        }
        runs = []
        self.bits = bits
    }

    /// - Complexity: O(1) with a bitmap, else O(log runs).
    func contains(_ sequence: UInt64) -> Bool {
        var run = 0
        return contains(sequence, run: &run)
    }

    /// `contains`, asked first of run `run`, then of the one after it, and
    /// left naming the run that holds `sequence` (if any): a segment's
    /// records mostly ascend, so each is in the run of the one before. A
    /// million records asked by binary search took 37 instructions each
    /// (callgrind, W8's open); most questions are now one comparison.
    /// - Complexity: O(1) with a bitmap or in `run` or the next, else O(log runs).
    @inline(__always)
    func contains(_ sequence: UInt64, run: inout Int) -> Bool {
        guard bits.isEmpty else {
            guard sequence >= first else { return false }
            let bit = sequence - first
            return bit / 64 < UInt64(bits.count) && bits[Int(bit / 64)] & (1 << (bit % 64)) != 0
        }
        if run < runs.count, runs[run].contains(sequence) { return true }
        if run + 1 < runs.count, runs[run + 1].contains(sequence) {
            run += 1
            return true
        }
        return search(sequence, run: &run)
    }

    /// `contains` by binary search of the runs.
    private func search(_ sequence: UInt64, run: inout Int) -> Bool {
        // The first run that ends at or past `sequence`.
        var low = 0
        var high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].upperBound < sequence { low = middle + 1 } else { high = middle }
        }
        guard low < runs.count, runs[low].lowerBound <= sequence else { return false }
        run = low
        return true
    }
}
