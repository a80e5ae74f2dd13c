import Testing
@testable import Kache

/// `SettledVersions` answers whether a manifest lists a sequence as settled:
/// from a bitmap when the runs lie close together, else from the runs, asked
/// first of the run the last answer found.
@Suite struct SettledVersionsTests {
    /// Every answer equals the set's, whichever form the versions take and
    /// in whatever order they are asked: ascending (a segment's records),
    /// descending, and at random, the run hint carried from question to question.
    @Test(arguments: [
        (seed: UInt64(1), runs: 40, gap: UInt64(3)),      // close together: a bitmap
        (seed: UInt64(2), runs: 40, gap: UInt64(5_000)),  // far apart: the runs
        (seed: UInt64(3), runs: 1, gap: UInt64(1)),       // one run, as after a million sets
    ])
    func everyAnswerIsTheSets(seed: UInt64, runs: Int, gap: UInt64) {
        var random = SeededGenerator(seed: seed)
        var settled = Set<UInt64>()
        var next: UInt64 = 1 + random.next() % 100
        for _ in 0 ..< runs {
            let length = 1 + random.next() % 300
            for sequence in next ..< next + length { settled.insert(sequence) }
            next += length + 1 + random.next() % gap
        }
        let versions = SettledVersions(SettledSequences(ascending: settled.sorted()))
        let asked = Array(0 ... next + 10)
        for order in [asked, asked.reversed(), asked.shuffled(using: &random)] {
            var run = 0
            for sequence in order {
                #expect(versions.contains(sequence, run: &run) == settled.contains(sequence), "sequence \(sequence)")
                #expect(versions.contains(sequence) == settled.contains(sequence), "sequence \(sequence)")
            }
        }
    }
}
