import KacheWorkloads
import Testing

/// W9's baselines on traces short enough to follow by hand.
@Suite struct CacheSimulatorTests {
    /// Requests of letters at times 0, 1, 2, …, none expiring; the hits.
    private func hits<Simulator: CacheSimulator>(_ simulator: inout Simulator, _ keys: String) -> [Bool] {
        keys.enumerated().map { time, letter in
            simulator.access(Int(letter.asciiValue!), now: Int64(time), expiresAt: .max)
        }
    }

    /// A B C A D A E A B C D A at capacity 3 (worked through in the comments):
    /// - FIFO: hits A at 4 and 8 (A re-entered at 6), and nothing after: 2;
    /// - LRU: keeps A, read at 4, 6 and 8, then loses it to C and D: 3;
    /// - S3-FIFO (small 1, main 2, ghost 2): A enters small, B and C main (small
    ///   full before any eviction); A hits at 4; D's miss evicts A (read once)
    ///   to the ghost; A's miss at 6 finds it there and puts it in main (D to the
    ///   ghost); E's miss evicts B from main (main over its share); A hits at 8;
    ///   B's miss sends E to the ghost; C hits at 10; D, in the ghost, goes to
    ///   main (B to the ghost); A hits at 12: 4.
    @Test func eachPolicyHitsADifferentCountOnTheSameTrace() {
        var fifo = FIFOSimulator(capacity: 3)
        var lru = LRUSimulator(capacity: 3)
        var s3fifo = S3FIFOSimulator(capacity: 3)
        let trace = "ABCADAEABCDA"
        let hitsAt = { (hits: [Bool]) in hits.indices.filter { hits[$0] }.map { $0 + 1 } }
        let (fifoHits, lruHits, s3fifoHits) = (hits(&fifo, trace), hits(&lru, trace), hits(&s3fifo, trace))
        #expect(hitsAt(fifoHits) == [4, 8])
        #expect(hitsAt(lruHits) == [4, 6, 8])
        #expect(hitsAt(s3fifoHits) == [4, 8, 10, 12])
        #expect(s3fifo.ghostHits == 2)
        #expect(fifo.count == 3 && lru.count == 3 && s3fifo.count == 3)
        s3fifo.checkInvariants()
    }

    /// A read three times and B twice, then a scan of four one-hit wonders:
    /// LRU and FIFO lose both, S3-FIFO keeps both (A moves to main when small
    /// is evicted; B, in main with a read, gets a second pass) and hits them after.
    @Test func s3FIFOKeepsFrequentKeysThroughAScan() {
        let trace = "AAABBXYZWAB"
        var fifo = FIFOSimulator(capacity: 3)
        var lru = LRUSimulator(capacity: 3)
        var s3fifo = S3FIFOSimulator(capacity: 3)
        let (fifoHits, lruHits, s3fifoHits) = (hits(&fifo, trace), hits(&lru, trace), hits(&s3fifo, trace))
        #expect(fifoHits.filter { $0 }.count == 3)
        #expect(lruHits.filter { $0 }.count == 3)
        #expect(s3fifoHits == [false, true, true, false, true, false, false, false, false, true, true])
        s3fifo.checkInvariants()
    }

    /// An object whose time is up is a miss at its expiry instant, and is set afresh.
    @Test func anExpiredObjectIsAMissAndIsSetAgain() {
        func run<Simulator: CacheSimulator>(_ simulator: inout Simulator) -> [Bool] {
            [
                simulator.access(1, now: 0, expiresAt: 10),
                simulator.access(1, now: 9, expiresAt: 19),
                simulator.access(1, now: 10, expiresAt: 20),
                simulator.access(1, now: 11, expiresAt: 21),
            ]
        }
        var fifo = FIFOSimulator(capacity: 3)
        var lru = LRUSimulator(capacity: 3)
        var s3fifo = S3FIFOSimulator(capacity: 3)
        let (fifoHits, lruHits, s3fifoHits) = (run(&fifo), run(&lru), run(&s3fifo))
        #expect(fifoHits == [false, true, false, true] && fifo.count == 1)
        #expect(lruHits == [false, true, false, true] && lru.count == 1)
        #expect(s3fifoHits == [false, true, false, true] && s3fifo.count == 1)
        s3fifo.checkInvariants()
    }

    /// LRU's queue of stale slots is compacted, and it stays exact: a key
    /// read between every other request is never evicted.
    /// Earliest expiry evicts the object whose time runs out first, however
    /// often it was read, and among equal times the first inserted; an
    /// expired object is a miss.
    @Test func earliestExpiryEvictsTheSoonestToExpire() {
        var simulator = EarliestExpirySimulator(capacity: 3)
        // (key, now, expires at): 2 is read three times and still goes first
        // (expiry 10); of 3 and 4 (both 30), 3 goes, inserted first; 4 expires at 30.
        let requests: [(Int, Int64, Int64)] = [
            (1, 0, 50), (2, 1, 10), (3, 2, 30), (2, 3, 0), (2, 4, 0), (2, 5, 0),
            (4, 6, 30), (2, 7, 40), (4, 8, 0), (2, 9, 0), (4, 31, 90), (1, 32, 0), (2, 32, 0),
        ]
        let hits = requests.map { simulator.access($0.0, now: $0.1, expiresAt: $0.2) }
        #expect(hits == [false, false, false, true, true, true, false, false, true, true, false, true, true])
        #expect(simulator.count == 3)
    }

    @Test func lruKeepsAKeyReadBetweenEveryMiss() {
        var lru = LRUSimulator(capacity: 2)
        _ = lru.access(0, now: 0, expiresAt: .max)
        var evictedAt: [Int] = []
        for key in 1...5_000 {
            _ = lru.access(key, now: Int64(key), expiresAt: .max)
            if !lru.access(0, now: Int64(key), expiresAt: .max) { evictedAt.append(key) }
        }
        #expect(evictedAt.isEmpty)
    }

    /// On a long Zipf trace with expiries: every policy holds at most its
    /// capacity, S3-FIFO's queues add up after every request, and the three
    /// rank as published on a skewed trace (S3-FIFO > LRU > FIFO).
    @Test func onAZipfTraceTheCapacityHoldsAndPoliciesRankAsPublished() {
        let trace = HitRatioTrace(.mixedTTL, keyCount: 2_000, requests: 30_000, seed: 5)
        var fifo = FIFOSimulator(capacity: 100)
        var lru = LRUSimulator(capacity: 100)
        var s3fifo = S3FIFOSimulator(capacity: 100)
        for index in trace.keys.indices {
            let now = HitRatioTrace.time(ofRequest: index)
            let expiresAt = now + Int64(trace.ttlSeconds[index]) // seconds read as ms, so that some expire
            _ = fifo.access(Int(trace.keys[index]), now: now, expiresAt: expiresAt)
            _ = lru.access(Int(trace.keys[index]), now: now, expiresAt: expiresAt)
            _ = s3fifo.access(Int(trace.keys[index]), now: now, expiresAt: expiresAt)
            #expect(fifo.count <= 100 && lru.count <= 100)
            if index % 97 == 0 { s3fifo.checkInvariants() }
        }
        let zipf = HitRatioTrace(.zipf, keyCount: 2_000, requests: 30_000, seed: 5)
        var f = FIFOSimulator(capacity: 100), l = LRUSimulator(capacity: 100), s = S3FIFOSimulator(capacity: 100)
        let (fifoHits, lruHits, s3Hits) = (zipf.hits(replayingOn: &f), zipf.hits(replayingOn: &l), zipf.hits(replayingOn: &s))
        #expect(s3Hits > lruHits && lruHits > fifoHits, "S3-FIFO \(s3Hits), LRU \(lruHits), FIFO \(fifoHits)")
    }
}
