import ArgumentParser
import Foundation
import KacheWorkloads

/// `kache-bench blocks`: what compressing small records together in blocks
/// saves, and what it costs a cold read, by block size (issue 32 chooses the
/// block size from these figures).
///
/// The records are a workload's keys and values in set order. Each block
/// size packs them (`RecordBlocks`), then reads a seeded random sample of
/// records cold: checksum, decompress the block, copy the record out. Beside
/// each size, the same figures for records compressed alone (size 0), which
/// is how records are stored today.
struct BlocksCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blocks",
        abstract: "Measure small records LZ4-compressed together in blocks: bytes stored against a cold read's cost, by block size.",
        discussion: """
            Examples:
              kache-bench blocks                          W8's million records, blocks of 0 (alone) to 64 KiB
              kache-bench blocks --workload W1 --sizes 0,4,16
            """
    )

    @Option(help: "W8 (a million 200-byte values) or W1 (100,000 of 1 KiB).")
    var workload = "W8"

    @Option(help: "Block sizes in KiB, e.g. 0,4,16; 0 compresses each record alone.")
    var sizes = "0,1,2,4,8,16,32,64"

    @Option(help: "KiB of a shared dictionary every block is compressed against (the first records, raw); 0 for none.")
    var dictionary = 0

    @Option(help: "Runs of each size; figures are the median (min–max).")
    var runs = 3

    @Option(help: "Cold reads per run, of records drawn at random.")
    var reads = 200_000

    @Flag(help: "The quick sizes of WORKLOADS.md (50,000 W8 records), a few seconds in all.")
    var quick = false

    func run() throws {
        let blockSizes = try sizes.split(separator: ",").map { item -> Int in
            guard let kib = Int(item.trimmingCharacters(in: .whitespaces)), kib >= 0 else { throw ValidationError("not a block size in KiB: \(item)") }
            return kib << 10
        }
        guard runs > 0, reads > 0 else { throw ValidationError("--runs and --reads must be positive") }
        let records = try Self.records(of: workload, sizes: quick ? .quick : .standard)
        let rawBytes = records.reduce(0) { $0 + $1.count }
        let shared = Array(records.joined().prefix(dictionary << 10))
        print("\(Format.grouped(records.count)) records of \(workload) (keys and values, \(Format.grouped(rawBytes)) bytes), \(Format.grouped(reads)) cold reads a run, median (min–max) of \(runs)"
            + (shared.isEmpty ? "" : ", every block compressed against a dictionary of the first \(Format.grouped(shared.count)) bytes"))
        var rows = [["block", "stored ÷ raw", "compress MB/s", "cold reads/s", "µs a read", "bytes vs alone", "read time vs alone"]]
        var alone: (stored: Double, micros: Double)?
        for blockSize in blockSizes {
            let figures = try measure(records, blockSize: blockSize, dictionary: shared)
            if blockSize == 0 { alone = (figures.stored.median, figures.micros.median) }
            rows.append([
                blockSize == 0 ? "alone" : "\(blockSize >> 10) KiB",
                String(format: "%.3f", figures.stored.median),
                Self.spread(figures.compressMBps, "%.0f"),
                Self.spread(figures.readsPerSecond, "%.0f"),
                Self.spread(figures.micros, "%.2f"),
                alone.map { String(format: "%.2f×", figures.stored.median / $0.stored) } ?? "—",
                alone.map { String(format: "%.2f×", figures.micros.median / $0.micros) } ?? "—",
            ])
        }
        // Each column as wide as its widest cell, numbers to the right.
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max()! }
        for row in rows {
            print(row.indices.map { $0 == 0 ? row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0)
                                              : String(repeating: " ", count: widths[$0] - row[$0].count) + row[$0] }.joined(separator: "  "))
        }
    }

    struct Figures {
        var stored: SampleStatistics
        var compressMBps: SampleStatistics
        var readsPerSecond: SampleStatistics
        var micros: SampleStatistics
    }

    /// Packs and reads `records` in blocks of `blockSize`, `runs` times.
    func measure(_ records: [[UInt8]], blockSize: Int, dictionary: [UInt8]) throws -> Figures {
        var stored: [Double] = []
        var compress: [Double] = []
        var readRates: [Double] = []
        var micros: [Double] = []
        for run in 0 ..< runs {
            let (blocks, packSeconds) = MonotonicClock.measure { RecordBlocks(records: records, blockSize: blockSize, dictionary: dictionary) }
            var rng = SplitMix64(seed: SplitMix64.defaultSeed, thread: run)
            let sample = (0 ..< reads).map { _ in Int(rng.next() % UInt64(records.count)) }
            var scratch: [UInt8] = []
            var wrong = 0
            let (_, readSeconds) = MonotonicClock.measure {
                for index in sample where blocks.read(index, scratch: &scratch) != records[index] { wrong += 1 }
            }
            guard wrong == 0 else { throw ValidationError("\(wrong) records read back wrong from blocks of \(blockSize) bytes") }
            stored.append(Double(blocks.storedBytes) / Double(blocks.rawBytes))
            compress.append(Double(blocks.rawBytes) / packSeconds / 1e6)
            readRates.append(Double(reads) / readSeconds)
            micros.append(readSeconds / Double(reads) * 1e6)
        }
        return Figures(stored: SampleStatistics(stored)!, compressMBps: SampleStatistics(compress)!, readsPerSecond: SampleStatistics(readRates)!, micros: SampleStatistics(micros)!)
    }

    /// The workload's records in set order: each key's UTF-8 bytes, then its value.
    static func records(of workload: String, sizes: WorkloadSizes) throws -> [[UInt8]] {
        switch workload.uppercased() {
        case "W8":
            let sets = ManySmallSets(count: sizes.manySmallCount, valueBytes: sizes.manySmallValueBytes)
            return zip(sets.keys, sets.values).map { Array($0.utf8) + Array($1) }
        case "W1":
            let inputs = WorkloadInputs(sizes: sizes, seed: SplitMix64.defaultSeed)
            return zip(inputs.loadKeys, inputs.loadValues).map { Array($0.utf8) + Array($1) }
        default:
            throw ValidationError("unknown workload \(workload): W8 or W1")
        }
    }

    private static func spread(_ figure: SampleStatistics, _ format: String) -> String {
        "\(String(format: format, figure.median)) (\(String(format: format, figure.min))–\(String(format: format, figure.max)))"
    }
}
