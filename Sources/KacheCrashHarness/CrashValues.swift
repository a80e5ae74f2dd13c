import Foundation
import KacheWorkloads

/// The values the crash harness stores: each one names its key space, its key
/// and its version in a readable prefix, followed by a body that is a pure
/// function of the version. So any bytes read back can be checked exactly
/// against what was set, and a torn, stale-but-foreign or mixed value is
/// caught by comparing bytes, not by trusting a checksum.
public enum CrashValues {
    /// The value of `version` for `key` in key space `space`.
    ///
    /// Bodies are 0 to ~8 KiB; a third are text LZ4 shrinks a lot, a third
    /// random bytes it can't shrink, a third a mix; a few are empty.
    public static func value(space: String, key: String, version: UInt64) -> Data {
        var random = SplitMix64(seed: version)
        var bytes = Array("kache-crash|\(space)|\(key)|\(version)|".utf8)
        let prefixLength = bytes.count
        let length = random.next() % 16 == 0 ? 0 : Int(random.next() % 8192)
        let kind = random.next() % 3
        let pattern = Array("{\"version\":\(version),\"key\":\"\(key)\"},".utf8)
        bytes += repeatElement(0, count: length)
        bytes.withUnsafeMutableBytes { raw in
            let body = UnsafeMutableRawBufferPointer(rebasing: raw[prefixLength...])
            var offset = 0
            while offset < length {
                // Words of random bits, or of the text pattern, or 32 random bytes then 32 dots.
                let chunk = min(8, length - offset)
                let word: UInt64 = switch kind {
                case 0: pattern.withUnsafeBytes { text in
                        (0 ..< 8).reduce(0) { $0 | UInt64(text[(offset + $1) % text.count]) << (8 * $1) }
                    }
                case 1: random.next()
                default: offset % 64 < 32 ? random.next() : 0x2E2E_2E2E_2E2E_2E2E
                }
                withUnsafeBytes(of: word.littleEndian) { body.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: chunk) }
                offset += chunk
            }
        }
        return Data(bytes)
    }

    /// The version named in `data` if `data` is exactly the value of that
    /// version for `key` in `space`; nil for anything else.
    public static func version(of data: Data, space: String, key: String) -> UInt64? {
        let prefix = Array("kache-crash|\(space)|\(key)|".utf8)
        guard data.count > prefix.count, data.prefix(prefix.count).elementsEqual(prefix) else { return nil }
        let rest = data.dropFirst(prefix.count)
        guard let bar = rest.firstIndex(of: UInt8(ascii: "|")),
              let version = UInt64(String(decoding: rest[..<bar], as: UTF8.self)),
              value(space: space, key: key, version: version) == data
        else { return nil }
        return version
    }

    /// The payload of Queue item `item` of `queue`.
    public static func item(queue: String, item: UInt64) -> Data {
        value(space: queue, key: "item", version: item)
    }

    /// The item number named in `data` if `data` is exactly that item of `queue`.
    public static func itemNumber(of data: Data, queue: String) -> UInt64? {
        version(of: data, space: queue, key: "item")
    }
}

extension CrashValues {
    /// The value the `fill` command stores with `size` bytes: random bytes
    /// (LZ4 can't shrink them) seeded by the size.
    public static func fillValue(size: Int) -> Data {
        var random = SplitMix64(seed: UInt64(size))
        var data = Data(count: size)
        data.withUnsafeMutableBytes { raw in
            for offset in stride(from: 0, to: size, by: 8) {
                let word = random.next().littleEndian
                withUnsafeBytes(of: word) { raw.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: min(8, size - offset)) }
            }
        }
        return data
    }
}
