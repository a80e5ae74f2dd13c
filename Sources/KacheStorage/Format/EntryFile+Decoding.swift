import Foundation

extension EntryFile {
    /// Why a file is not a valid entry. Any of these reads as a miss, and the
    /// file is moved to quarantine.
    package enum Damage: Error, Equatable, CustomStringConvertible {
        case truncated(length: Int)
        case badMagic
        case unsupportedVersion(UInt16)
        case unknownFlags(UInt16)
        case lengthMismatch(expected: Int, actual: Int)
        case checksumMismatch
        case invalidName
        case unknownKind(UInt8)
        case wrongEntry(expectedKey: String, foundKey: String)
        case undecompressible
        case sequenceOutOfRange(UInt64)

        package var description: String {
            switch self {
            case let .truncated(length): return "truncated (\(length) bytes, shorter than a header)"
            case .badMagic: return "not a Kache entry file (bad magic)"
            case let .unsupportedVersion(v): return "format version \(v) is not supported"
            case let .unknownFlags(f): return "unknown header flags 0x\(String(f, radix: 16))"
            case let .lengthMismatch(expected, actual): return "length \(actual) bytes, header says \(expected)"
            case .checksumMismatch: return "checksum mismatch"
            case .invalidName: return "key or key-space name is not valid UTF-8"
            case let .unknownKind(k): return "unknown key-space kind \(k)"
            case let .wrongEntry(expected, found): return "holds key \"\(found.prefix(80))\" where \"\(expected.prefix(80))\" was expected"
            case .undecompressible: return "LZ4 payload does not decompress to its recorded length"
            case let .sequenceOutOfRange(sequence): return "sequence \(sequence) is past the largest, \(EntryFile.largestSequence)"
            }
        }
    }

    /// The largest sequence a record may carry: the index packs a sequence
    /// in 48 bits (`IndexShard.Entry`), 8.9 years of a million writes a second.
    /// A record past it is damage: accepted, it would trap the index.
    package static let largestSequence: UInt64 = 1 << 48 - 1

    /// The most LZ4 can expand a block: one input byte per 255 output bytes.
    package static let largestCompressionRatio = 255

    /// Parses and checks the header of a file of `fileLength` bytes whose first
    /// bytes are `prefix` (at least the header and names). Does not read the
    /// payload, so it cannot check the checksum: `decode` does.
    package static func decodeHeader(_ prefix: UnsafeRawBufferPointer, fileLength: Int) throws(Damage) -> Header {
        guard prefix.count >= headerSize, fileLength >= headerSize else { throw .truncated(length: fileLength) }
        guard prefix.prefix(4).elementsEqual(magic) else { throw .badMagic }
        func field<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: prefix.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let version = field(Offset.version, UInt16.self)
        guard EntryFile.readableVersions.contains(version) else { throw .unsupportedVersion(version) }
        let flags = Flags(rawValue: field(Offset.flags, UInt16.self))
        guard Flags.known.isSuperset(of: flags) else { throw .unknownFlags(flags.rawValue) }
        let kind = field(Offset.kind, UInt8.self)
        guard kinds.contains(kind) else { throw .unknownKind(kind) }
        let keyLength = Int(field(Offset.keyLength, UInt16.self))
        let spaceLength = Int(field(Offset.spaceLength, UInt16.self))
        let rawLength = Int(field(Offset.rawLength, UInt32.self))
        let storedLength = Int(field(Offset.storedLength, UInt32.self))
        let expected = headerSize + keyLength + spaceLength + storedLength
        guard expected == fileLength else { throw .lengthMismatch(expected: expected, actual: fileLength) }
        // LZ4 makes at most 255 bytes of one (a run-length byte of 255), so a
        // compressed payload can't stand for more than 255 × its length; checking
        // it here keeps a hostile header from making `decode` allocate 4 GiB.
        let lengthsAgree = flags.contains(.tombstone)
            ? !flags.contains(.compressed) && rawLength == 0 && storedLength == 0 && version >= 2
            : flags.contains(.compressed)
            ? storedLength < rawLength && rawLength <= storedLength * largestCompressionRatio
            : storedLength == rawLength
        guard lengthsAgree else { throw .lengthMismatch(expected: rawLength, actual: storedLength) }
        guard prefix.count >= headerSize + keyLength + spaceLength else { throw .truncated(length: prefix.count) }
        let keyBytes = UnsafeRawBufferPointer(rebasing: prefix[headerSize ..< headerSize + keyLength])
        let spaceBytes = UnsafeRawBufferPointer(rebasing: prefix[headerSize + keyLength ..< headerSize + keyLength + spaceLength])
        guard keyLength > 0,
              let key = String(validUTF8: keyBytes),
              let space = String(validUTF8: spaceBytes)
        else { throw .invalidName }
        let sequence = field(Offset.sequence, UInt64.self)
        guard sequence <= largestSequence else { throw .sequenceOutOfRange(sequence) }
        return Header(
            flags: flags,
            expiry: field(Offset.expiry, Int64.self),
            sequence: sequence,
            rawLength: rawLength,
            storedLength: storedLength,
            key: key,
            space: space,
            kind: kind
        )
    }

    /// Checks the checksum of a whole file whose header `decodeHeader` accepted.
    package static func verifyChecksum(_ file: UnsafeRawBufferPointer) throws(Damage) {
        let stored = file.loadUnaligned(fromByteOffset: Offset.checksum, as: UInt64.self)
        guard UInt64(littleEndian: stored) == XXHash64.hash(UnsafeRawBufferPointer(rebasing: file[Offset.checksummed...])) else {
            throw .checksumMismatch
        }
    }

    /// Checks a whole file (header, checksum, lengths) and returns its header and
    /// its payload, decompressed. Never traps on hostile input.
    /// - Complexity: O(n) in the file's length.
    package static func decode(_ file: UnsafeRawBufferPointer) throws(Damage) -> (header: Header, payload: Data) {
        let header = try decodeHeader(file, fileLength: file.count)
        try verifyChecksum(file)
        let source = UnsafeRawBufferPointer(rebasing: file[(file.count - header.storedLength)...])
        guard header.flags.contains(.compressed) else { return (header, Data(source)) }
        var payload = Data(count: header.rawLength)
        let ok = payload.withUnsafeMutableBytes { LZ4.decompress(source, into: $0) }
        guard ok else { throw .undecompressible }
        return (header, payload)
    }

    /// `decode` of a record held in a `Data`.
    package static func decode(_ record: Data) throws(Damage) -> (header: Header, payload: Data) {
        try record.withUnsafeBytes { raw in Result { () throws(Damage) in try decode(raw) } }.get()
    }
}
