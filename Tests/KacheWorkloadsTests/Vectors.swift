import Foundation
import KacheTestSupport
import Testing

/// shared/bench/vectors.json: the first outputs of each generator for seed 42.
struct Vectors: Decodable {
    struct TextValue: Decodable {
        let first80: String
        let sha256: String
        let length: Int
    }

    struct BlobValue: Decodable {
        let first16Hex: String
        let sha256: String
        enum CodingKeys: String, CodingKey {
            case first16Hex = "first16_hex", sha256
        }
    }

    let seed: UInt64
    let splitmix64First3: [String]
    let key0: String
    let key99999: String
    let textValueIndex0Of1024: TextValue
    let blobValue1024: BlobValue
    let zipfFirst20Ranks: [Int]

    enum CodingKeys: String, CodingKey {
        case seed
        case splitmix64First3 = "splitmix64_first3"
        case key0 = "key_0"
        case key99999 = "key_99999"
        case textValueIndex0Of1024 = "text_value_index0_1024"
        case blobValue1024 = "blob_value_1024"
        case zipfFirst20Ranks = "zipf_n100000_s0.99_first20_ranks"
    }

    /// The copy of shared/bench/vectors.json kept beside this file, so that a
    /// clone on its own (as CI has) checks the generators too.
    static let url = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("vectors.json")

    /// `<repo>/../shared/bench/vectors.json`, where the workloads are defined,
    /// when the repository sits beside shared/.
    static let sharedURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()    // KacheWorkloadsTests
        .deletingLastPathComponent()    // Tests
        .deletingLastPathComponent()    // the repository
        .appendingPathComponent("../shared/bench/vectors.json")
        .standardizedFileURL

    /// Reads the vectors; a missing or unreadable file fails the test, never skips it.
    static func load() throws -> Vectors {
        let data = try #require(
            FileManager.default.contents(atPath: url.path),
            "vectors.json not found at \(url.path): the generators cannot be checked without it"
        )
        return try JSONDecoder().decode(Vectors.self, from: data)
    }
}

/// The SHA-256 of `data` as lowercase hex, by /usr/bin/sha256sum on its stdin.
func sha256Hex(_ data: Data) throws -> String {
    let outcome = try ChildProcess.run(["/usr/bin/sha256sum"], input: data, timeout: .seconds(60))
    try #require(outcome.status == 0, "sha256sum exited with \(outcome.status): \(outcome.stderr)")
    return String(outcome.output.prefix(64))
}

/// `data` as lowercase hex.
func hex<Bytes: Sequence<UInt8>>(_ data: Bytes) -> String {
    data.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}
