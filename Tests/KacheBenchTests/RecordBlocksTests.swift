import Testing
@testable import KacheBench

@Suite("Records compressed together in blocks (kache-bench blocks)")
struct RecordBlocksTests {
    /// Text records of 50–299 bytes, some repetition between them as in JSON.
    let records: [[UInt8]] = (0 ..< 500).map { index in
        Array("{\"id\":\(index),\"name\":\"user \(index)\",\"tags\":[\"a\",\"b\"]}".utf8) + [UInt8](repeating: UInt8(65 + index % 26), count: index % 250)
    }

    @Test(arguments: [0, 256, 1024, 4096, 65536])
    func everyRecordReadsBackWhole(blockSize: Int) throws {
        let blocks = RecordBlocks(records: records, blockSize: blockSize)
        var scratch: [UInt8] = []
        for index in records.indices {
            #expect(blocks.read(index, scratch: &scratch) == records[index], "record \(index)")
        }
        #expect(blocks.rawBytes == records.reduce(0) { $0 + $1.count })
    }

    /// Records go in order and are never split; a block passes its size only
    /// when one record alone is longer; size 0 makes a block per record.
    @Test func blocksHoldWholeRecordsInOrderWithinTheirSize() {
        let blocks = RecordBlocks(records: records, blockSize: 1024)
        var previous = (block: 0, end: 0)
        for (index, place) in blocks.places.enumerated() {
            #expect(place.range.count == records[index].count)
            if place.block == previous.block {
                #expect(place.range.lowerBound == previous.end, "record \(index) does not follow the one before")
            } else {
                #expect(place.block == previous.block + 1 && place.range.lowerBound == 0)
            }
            previous = (place.block, place.range.upperBound)
        }
        for block in 0 ..< blocks.blockCount {
            let inBlock = blocks.places.filter { $0.block == block }
            #expect(blocks.rawLengths[block] <= 1024 || inBlock.count == 1)
        }
        #expect(RecordBlocks(records: records, blockSize: 0).blockCount == records.count)
    }

    /// Records compressed alone against a dictionary of the first ones read
    /// back whole, and take fewer bytes than without it.
    @Test func aSharedDictionaryShrinksRecordsAlone() {
        let dictionary = Array(records.joined().prefix(4096))
        let plain = RecordBlocks(records: records, blockSize: 0)
        let withDictionary = RecordBlocks(records: records, blockSize: 0, dictionary: dictionary)
        var scratch: [UInt8] = []
        for index in records.indices {
            #expect(withDictionary.read(index, scratch: &scratch) == records[index], "record \(index)")
        }
        #expect(withDictionary.storedBytes < plain.storedBytes)
    }

    @Test func blocksStoreFewerBytesThanRecordsAlone() {
        let alone = RecordBlocks(records: records, blockSize: 0)
        let together = RecordBlocks(records: records, blockSize: 4096)
        #expect(together.storedBytes < alone.storedBytes)
        #expect(alone.storedBytes <= alone.rawBytes)
    }
}
