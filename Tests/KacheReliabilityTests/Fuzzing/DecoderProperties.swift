import Foundation
@testable import Kache
import KacheStorage

/// What must hold for any bytes handed to the entry-file and manifest
/// decoders, hostile or not. Shared by the libFuzzer targets (Fuzz/, built by
/// scripts/fuzz.sh) and by `FuzzRegressionTests`, which replays every input
/// the fuzzer ever kept.
///
/// Each check returns the properties that failed, as sentences; a decoder
/// that traps fails them all by crashing the process, which is what the
/// fuzzer looks for first.
enum DecoderProperties {
    /// What one fuzzer input breaks, fed to the entry-file decoders as it is
    /// and again with a valid magic and checksum (so that mutations reach the
    /// checks behind them). The entry-file fuzz target runs exactly this.
    static func entryFileInputViolations(_ input: UnsafeRawBufferPointer) -> [String] {
        var violations = entryFileViolations(input)
        if let sealed = withValidEntryChecksum(input) {
            violations += sealed.withUnsafeBytes { entryFileViolations($0) }.map { "resealed: \($0)" }
        }
        return violations
    }

    /// The same for the manifest decoder; the manifest fuzz target runs exactly this.
    static func manifestInputViolations(_ input: UnsafeRawBufferPointer) -> [String] {
        var violations = manifestViolations(input)
        if let sealed = withValidManifestChecksum(input) {
            violations += sealed.withUnsafeBytes { manifestViolations($0) }.map { "resealed: \($0)" }
        }
        return violations
    }

    /// LZ4 turns at most one byte into 255 (a match-length byte of 255), so a
    /// compressed payload of n bytes never stands for more than 255 × n.
    static let largestLZ4Ratio = 255

    /// Decodes `bytes` as an entry file, whole and header-only, and checks
    /// that the two agree and that a decoded entry re-encodes to itself.
    static func entryFileViolations(_ bytes: UnsafeRawBufferPointer) -> [String] {
        var violations: [String] = []
        let header = Result { () throws(EntryFile.Damage) in try EntryFile.decodeHeader(bytes, fileLength: bytes.count) }
        // `decode` allocates the raw length before it decompresses: a header must
        // not get that far with a length no LZ4 payload of its size can produce.
        if case let .success(accepted) = header, accepted.flags.contains(.compressed),
           accepted.rawLength > largestLZ4Ratio * accepted.storedLength
        {
            violations.append("decodeHeader accepts a raw length of \(accepted.rawLength) bytes for \(accepted.storedLength) compressed bytes")
        }
        let whole = Result { () throws(EntryFile.Damage) in try EntryFile.decode(bytes) }
        guard case let .success((decoded, payload)) = whole else { return violations }
        guard case let .success(headerOnly) = header, headerOnly == decoded else {
            return ["decode accepted a file whose header decodeHeader rejects or reads differently"]
        }
        if payload.count != decoded.rawLength { violations.append("payload is \(payload.count) bytes, header says \(decoded.rawLength)") }
        if decoded.fileLength != bytes.count { violations.append("header length \(decoded.fileLength) != file length \(bytes.count)") }
        if decoded.key.isEmpty { violations.append("decode accepted an empty key") }
        // The header-only path (the open-time scan) reads just the header and both names.
        let prefixLength = min(bytes.count, EntryFile.headerSize + decoded.key.utf8.count + decoded.space.utf8.count)
        let prefix = UnsafeRawBufferPointer(rebasing: bytes[..<prefixLength])
        if (try? EntryFile.decodeHeader(prefix, fileLength: bytes.count)) != decoded {
            violations.append("decodeHeader on the header and names alone disagrees with the whole file")
        }
        violations += reencodingViolations(decoded, payload: payload)
        return violations
    }

    /// Lays the decoded entry out again, as the writer would, and decodes that.
    private static func reencodingViolations(_ header: EntryFile.Header, payload: Data) -> [String] {
        let name = EntryName(space: header.space, key: header.key)
        // NFC can lengthen a key past what the 16-bit length field holds; `put` refuses those.
        guard name.canonicalKey.utf8.count <= Int(UInt16.max) else { return [] }
        var draft = EntryFile.draft(name: name, kind: header.kind, payload: payload, expiry: header.expiry, compressionThreshold: 0)
        draft.seal(sequence: header.sequence)
        let again = draft.bytes.withUnsafeBytes { raw in Result { () throws(EntryFile.Damage) in try EntryFile.decode(raw) } }
        guard case let .success((header2, payload2)) = again else { return ["a re-encoded entry does not decode: \(again)"] }
        var violations: [String] = []
        if payload2 != payload { violations.append("a re-encoded entry decodes to another payload") }
        if header2.key != name.canonicalKey || header2.space != header.space || header2.expiry != header.expiry
            || header2.sequence != header.sequence || header2.kind != header.kind
        {
            violations.append("a re-encoded entry decodes to another header")
        }
        return violations
    }

    /// Decodes `bytes` as a manifest and checks that a decoded manifest
    /// encodes to bytes that decode to the same manifest.
    static func manifestViolations(_ bytes: UnsafeRawBufferPointer) -> [String] {
        guard let manifest = try? Manifest(decoding: bytes) else { return [] }
        let encoded = manifest.encoded()
        let again = encoded.withUnsafeBytes { raw in Result { () throws(Manifest.Damage) in try Manifest(decoding: raw) } }
        guard case let .success(decoded) = again else { return ["a re-encoded manifest does not decode: \(again)"] }
        return decoded == manifest ? [] : ["a re-encoded manifest decodes to another manifest"]
    }

    /// `bytes` with the magic and checksum an entry file needs, so that the
    /// fuzzer's mutations reach the parser behind them.
    static func withValidEntryChecksum(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        resealed(bytes, magic: EntryFile.magic, checksumAt: EntryFile.Offset.checksum, coveredFrom: EntryFile.Offset.checksummed)
    }

    /// `bytes` with the magic and checksum a manifest needs.
    static func withValidManifestChecksum(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        resealed(bytes, magic: Manifest.magic, checksumAt: 4, coveredFrom: 12)
    }

    private static func resealed(_ bytes: UnsafeRawBufferPointer, magic: [UInt8], checksumAt offset: Int, coveredFrom start: Int) -> [UInt8]? {
        guard bytes.count >= start else { return nil }
        var copy = [UInt8](bytes)
        copy.replaceSubrange(0 ..< magic.count, with: magic)
        let checksum = copy.withUnsafeBytes { XXHash64.hash(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        withUnsafeBytes(of: checksum.littleEndian) { copy.replaceSubrange(offset ..< offset + 8, with: $0) }
        return copy
    }
}
